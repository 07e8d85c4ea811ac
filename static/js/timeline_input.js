// timeline_input.js — how the timeline is driven: drag to pan (and scroll
// the tracks), wheel to zoom at the pointer (Shift or a sideways wheel
// pans), click to select, Shift+drag to select an area (timeline_area.js),
// the W/A/S/D, 0, F, / and Esc keys, and the
// toolbar's zoom buttons.
//
// Invariants: every gesture changes the view through tl.view.set(), never
// st directly. A press that moves less than 4 pixels is a click, not a
// drag. Keys are ignored while typing in the search box or a menu, and
// with Ctrl, Alt or Meta held, so browser shortcuts keep working. Listeners
// outside the timeline (window) end with the page (tl.signal).

const DRAG_THRESHOLD_PX = 4;
const WHEEL_ZOOM_RATE = 0.0015; // per pixel of wheel travel, exponential so in and out cancel
const KEY_ZOOM_IN = 0.8; // W and S: one step in, then one out, is back where it was
const KEY_ZOOM_OUT = 1.25;
const KEY_PAN = 0.1; // of the view's width

export function attachInput(tl) {
  const pointer = { x: null }; // over the canvas, for keys to zoom at
  attachDrag(tl);
  attachWheel(tl);
  attachPointer(tl, pointer);
  attachKeys(tl, pointer);
  attachButtons(tl);
}

// Scales the view by `factor` around time `anchor` (the middle by default).
function zoomAt(tl, factor, anchor) {
  const { st } = tl;
  const a = anchor ?? (st.viewStart + st.viewEnd) / 2;
  tl.view.set(a - (a - st.viewStart) * factor, a + (st.viewEnd - a) * factor);
}

// Moves the view by `fraction` of its width (negative: earlier).
function pan(tl, fraction) {
  const d = tl.view.span() * fraction;
  tl.view.set(tl.st.viewStart + d, tl.st.viewEnd + d);
}

function attachDrag(tl) {
  const { st } = tl;
  const { canvas, scroller } = tl.dom;
  let drag = null;
  canvas.addEventListener('mousedown', (e) => {
    if (e.button !== 0) return;
    if (e.shiftKey) {
      const r = canvas.getBoundingClientRect();
      tl.area.begin(e.clientX - r.left, e.clientY - r.top + scroller.scrollTop);
      canvas.focus({ preventScroll: true });
      return;
    }
    drag = { x: e.clientX, y: e.clientY, s: st.viewStart, e: st.viewEnd, top: scroller.scrollTop, moved: false };
    canvas.focus({ preventScroll: true });
  });
  const onMove = (e) => {
    if (tl.area.dragging()) {
      const r = canvas.getBoundingClientRect();
      tl.area.move(e.clientX - r.left, e.clientY - r.top + scroller.scrollTop);
      return;
    }
    if (!drag) return;
    const dx = e.clientX - drag.x,
      dy = e.clientY - drag.y;
    if (!drag.moved && Math.abs(dx) + Math.abs(dy) < DRAG_THRESHOLD_PX) return;
    drag.moved = true;
    canvas.classList.add('dragging');
    const d = (dx / tl.view.cssWidth()) * (drag.e - drag.s);
    scroller.scrollTop = drag.top - dy;
    tl.view.set(drag.s - d, drag.e - d);
  };
  const onUp = (e) => {
    if (tl.area.end()) return;
    if (!drag) return;
    const wasDrag = drag.moved;
    drag = null;
    canvas.classList.remove('dragging');
    if (wasDrag) return;
    const r = canvas.getBoundingClientRect();
    tl.details.select(tl.draw.eventAt(e.clientX - r.left, e.clientY - r.top));
  };
  window.addEventListener('mousemove', onMove, { signal: tl.signal });
  window.addEventListener('mouseup', onUp, { signal: tl.signal });
}

function attachWheel(tl) {
  const { canvas } = tl.dom;
  const onWheel = (e) => {
    e.preventDefault();
    const unit = e.deltaMode === 1 ? 16 : e.deltaMode === 2 ? 400 : 1; // lines, pages → pixels
    const r = canvas.getBoundingClientRect();
    const t = tl.view.tOf(e.clientX - r.left);
    if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
      pan(tl, ((e.deltaX || e.deltaY) * unit) / tl.view.cssWidth());
    } else {
      zoomAt(tl, Math.exp(e.deltaY * unit * WHEEL_ZOOM_RATE), t);
    }
  };
  canvas.addEventListener('wheel', onWheel, { passive: false });
}

function attachPointer(tl, pointer) {
  const { canvas } = tl.dom;
  canvas.addEventListener('mousemove', (e) => {
    const r = canvas.getBoundingClientRect();
    pointer.x = e.clientX - r.left;
    tl.counters.hover(pointer.x, e.clientY - r.top + tl.dom.scroller.scrollTop, e.clientX, e.clientY);
  });
  canvas.addEventListener('mouseleave', () => {
    pointer.x = null;
    tl.counters.hideTip();
  });
}

function attachKeys(tl, pointer) {
  const { st } = tl;
  const onKey = (e) => {
    if (e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement || e.metaKey || e.ctrlKey || e.altKey)
      return;
    const anchor = pointer.x === null ? undefined : tl.view.tOf(pointer.x);
    switch (e.key.toLowerCase()) {
      case 'w':
        zoomAt(tl, KEY_ZOOM_IN, anchor);
        break;
      case 's':
        zoomAt(tl, KEY_ZOOM_OUT, anchor);
        break;
      case 'a':
        pan(tl, -KEY_PAN);
        break;
      case 'd':
        pan(tl, KEY_PAN);
        break;
      case '0':
        tl.view.set(st.t0, st.t1);
        break;
      case 'escape':
        tl.details.select(null);
        break;
      case 'f':
        if (st.selected) tl.view.focusEvent(st.selected.ev);
        break;
      case '/':
        e.preventDefault();
        tl.dom.searchBox.focus();
        return;
      default:
        return;
    }
    e.preventDefault();
  };
  window.addEventListener('keydown', onKey, { signal: tl.signal });
}

function attachButtons(tl) {
  const { zoomIn, zoomOut, resetBtn } = tl.dom;
  zoomIn.addEventListener('click', () => zoomAt(tl, 0.5));
  zoomOut.addEventListener('click', () => zoomAt(tl, 2));
  resetBtn.addEventListener('click', () => tl.view.set(tl.st.t0, tl.st.t1));
}
