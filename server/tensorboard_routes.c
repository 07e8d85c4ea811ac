/*
 * tensorboard_routes.c — see tensorboard_routes.h (not written yet).
 */
#include "tensorboard_routes.h"

void xpv_tensorboard_reply(xpv_server *s, struct MHD_Connection *c, const char *path, xpv_reply *r)
{
    (void)s;
    (void)c;
    xpv_reply_error(r, 404, "no TensorBoard route %.100s", path);
}
