/*
 * test_step_names.c — which host annotation names mark steps in PyTorch
 * traces without ProfilerStep#N, and the near misses that must not.
 */
#include "testutil.h"
#include "indexer/readers/step_names.h"
#include "store/xpv_event.h"

#include <string.h>

static int source_of(const char *name, int64_t *number)
{
    return xpv_step_name_source(name, strlen(name), number);
}

static void test_training_step_names(void)
{
    static const char *const yes[] = {
        "training_step",
        "train_step",
        "[LightningModule]LitModel.training_step",
        "[Strategy]DDPStrategy.training_step",
        "model/train_step",
        "ns::train_step",
    };
    int64_t n = 0;
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++) {
        CU_ASSERT_EQUAL(source_of(yes[i], &n), XPV_STEP_TRAINING_STEP);
        CU_ASSERT_EQUAL(n, -1);
    }
    CU_ASSERT_EQUAL(source_of("train_step#12", &n), XPV_STEP_TRAINING_STEP);
    CU_ASSERT_EQUAL(n, 12);
    CU_ASSERT_EQUAL(source_of("Model.training_step_3", &n), XPV_STEP_TRAINING_STEP);
    CU_ASSERT_EQUAL(n, 3);
}

static void test_optimizer_names(void)
{
    int64_t n = 0;
    CU_ASSERT_EQUAL(source_of("Optimizer.step#SGD.step", &n), XPV_STEP_OPTIMIZER);
    CU_ASSERT_EQUAL(n, -1);
    CU_ASSERT_EQUAL(source_of("Optimizer.step#AdamW.step", &n), XPV_STEP_OPTIMIZER);
}

static void test_near_misses(void)
{
    static const char *const no[] = {
        "",
        "Optimizer.zero_grad#SGD.zero_grad",
        "training_steps",
        "validation_step",
        "pre_training_step",
        "training_step_end",
        "train_step#",
        "train_step#1x",
        "train_step_12345678901234567890",
        "aten::add",
        "ProfilerStep#3", /* its own, stronger source, decided by the reader */
        "[LightningModule]LitModel.training_step.backward",
    };
    for (size_t i = 0; i < sizeof no / sizeof *no; i++) {
        int64_t n = 7;
        CU_ASSERT_EQUAL(source_of(no[i], &n), 0);
        CU_ASSERT_EQUAL(n, -1);
    }
    /* not NUL-terminated, and a NUL inside the name is no separator */
    char buf[] = {'x', '\0', 't', 'r', 'a', 'i', 'n', '_', 's', 't', 'e', 'p'};
    int64_t n;
    CU_ASSERT_EQUAL(xpv_step_name_source(buf, sizeof buf, &n), 0);
    CU_ASSERT_EQUAL(xpv_step_name_source("train_stepXX", 10, &n), XPV_STEP_TRAINING_STEP);
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"training_step names", test_training_step_names},
        {"Optimizer.step names", test_optimizer_names},
        {"near misses", test_near_misses},
        {NULL, NULL},
    };
    return xpv_test_run("step_names", tests, 0);
}
