// timeline_area_panel.js — the bottom panel an area selection's sums show
// in, as Perfetto's: the timeline's full width under the tracks, its height
// dragged by the top edge (or set with the arrow keys on that edge) and
// remembered by the browser, the table scrolling under a header that stays.
// It knows nothing of areas: timeline_area.js fills it and hides it.
//
// Invariants: the panel is hidden exactly when it has nothing to show; its
// height stays within [MIN_H, the timeline's height less MIN_TRACKS_H], so
// the tracks above never vanish; the canvas follows through the scroller's
// ResizeObserver (timeline_draw.js), not through a call from here.

import { h } from './format.js';

const HEIGHT_KEY = 'xpv-area-panel-height';
const DEFAULT_H = 260;
const MIN_H = 90;
const MIN_TRACKS_H = 140;
const KEY_STEP = 24;

// host: the timeline's column (.tl), which the panel ends;
// onClose: what the close button does (clearing the area).
export function createAreaPanel(host, onClose) {
  const title = h('h2', null, 'Area selection');
  const summary = h('span.tl-area-summary', { 'aria-live': 'polite' });
  const close = h(
    'button.btn.tl-area-close',
    {
      type: 'button',
      title: 'Close the area selection (Esc)',
      'aria-label': 'Close the area selection',
      onclick: () => onClose(),
    },
    '×',
  );
  const edge = h('div.tl-area-edge', {
    role: 'separator',
    tabindex: '0',
    'aria-orientation': 'horizontal',
    'aria-label': 'Resize the area selection panel',
    title: 'Drag to resize',
  });
  const body = h('div.tl-area-body');
  const el = h(
    'section.tl-area-panel',
    { hidden: true, 'aria-label': 'Area selection' },
    edge,
    h('div.tl-area-head', null, title, summary, h('span.grow'), close),
    body,
  );
  host.append(el);
  let height = stored();

  function stored() {
    const v = Number(localStorage.getItem(HEIGHT_KEY));
    return Number.isFinite(v) && v >= MIN_H ? v : DEFAULT_H;
  }

  function setHeight(px, remember) {
    const room = (el.parentElement?.clientHeight || 0) - MIN_TRACKS_H;
    height = Math.round(Math.max(MIN_H, room > MIN_H ? Math.min(px, room) : px));
    el.style.height = `${height}px`;
    edge.setAttribute('aria-valuenow', String(height));
    if (remember) localStorage.setItem(HEIGHT_KEY, String(height));
  }

  edge.addEventListener('pointerdown', (e) => {
    e.preventDefault();
    edge.setPointerCapture(e.pointerId);
    const y0 = e.clientY,
      h0 = height;
    el.classList.add('resizing');
    const move = (m) => setHeight(h0 + (y0 - m.clientY), false);
    const up = () => {
      el.classList.remove('resizing');
      edge.removeEventListener('pointermove', move);
      edge.removeEventListener('pointerup', up);
      edge.removeEventListener('pointercancel', up);
      setHeight(height, true);
    };
    edge.addEventListener('pointermove', move);
    edge.addEventListener('pointerup', up);
    edge.addEventListener('pointercancel', up);
  });
  edge.addEventListener('keydown', (e) => {
    if (e.key !== 'ArrowUp' && e.key !== 'ArrowDown') return;
    e.preventDefault();
    setHeight(height + (e.key === 'ArrowUp' ? KEY_STEP : -KEY_STEP), true);
  });

  // Shows the panel with `nodes` under its header and `text` beside the title.
  function show(text, ...nodes) {
    summary.textContent = text;
    body.replaceChildren(...nodes.filter(Boolean));
    if (el.hidden) {
      el.hidden = false;
      setHeight(height, false);
    }
  }

  function hide() {
    el.hidden = true;
    body.replaceChildren();
    summary.textContent = '';
  }

  return { el, body, show, hide, setHeight: (px) => setHeight(px, true), height: () => height };
}
