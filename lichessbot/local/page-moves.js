// The move list of the page (a part of page.js's closure, see page-board.js): the moves with the bot's evals,
// browsing with clicks and the arrow keys (as lichess: left/right a move, up/home the start, down/end the game
// now), and after the game the review: the eval graph (inline SVG) under the list, clickable as lichess's.

  // the ply shown: st.view null follows the game; else 0 (the start) to the number of moves
  const shownPly = () => (st.view === null || !st.pos ? (st.pos ? st.pos.sans.length : 0) : st.view);
  const browsing = () => st.view !== null && !!st.pos && st.view < st.pos.sans.length;

  function viewPly(ply) {
    if (!st.pos) return;
    const n = st.pos.sans.length;
    ply = Math.max(0, Math.min(n, ply));
    st.view = ply === n ? null : ply;
    st.selected = null;
    render();
  }

  // the position the board shows: the game's now, or the browsed one (the server sends every FEN: history)
  function shownPosition() {
    const pos = st.pos;
    if (!browsing()) return pos;
    const ply = st.view;
    return { fen: pos.fens[ply], lastMove: ply ? pos.ucis[ply - 1] : null, check: pos.checks[ply], dests: {}, turn: null };
  }

  function renderMoves() {
    const box = $('moves');
    const pos = st.pos;
    if (!pos) {
      box.innerHTML = '';
      $('review').hidden = true;
      return;
    }
    const fen = st.full && st.full.initialFen !== 'startpos' ? st.full.initialFen.split(' ') : null;
    let no = fen ? parseInt(fen[5] || '1', 10) : 1;
    const n = pos.sans.length;
    const at = shownPly() - 1;
    const evalOf = (i) => (pos.evals[String(i)] ? '<span class="ev">' + esc(pos.evals[String(i)]) + '</span>' : '');
    const cell = (i) => (i < n ? '<div class="m' + (i === at ? ' active' : '') + (i === n - 1 ? ' last' : '')
      + '" data-ply="' + (i + 1) + '">' + esc(pos.sans[i]) + evalOf(i) + '</div>' : '<div class="m"></div>');
    const out = [];
    let i = 0;
    if (fen && fen[1] === 'b' && n) {
      out.push('<div class="n">' + no + '</div><div class="m">\u2026</div>' + cell(0));
      i = 1;
      no++;
    }
    for (; i < n; i += 2, no++) out.push('<div class="n">' + no + '</div>' + cell(i) + cell(i + 1));
    box.innerHTML = out.join('');
    renderReview();
  }

  // the shown move in sight in the list (after every other part moved the layout: render() calls it last)
  function scrollMoves() {
    const box = $('moves');
    const active = box.querySelector('.m.active');
    if (!active || !browsing()) {
      box.scrollTop = box.scrollHeight;
      return;
    }
    const top = active.offsetTop - box.offsetTop;
    if (top < box.scrollTop) box.scrollTop = top;
    else if (top + active.offsetHeight > box.scrollTop + box.clientHeight) box.scrollTop = top + active.offsetHeight - box.clientHeight;
  }

  // lichess's winning chances of an eval (white's side): 2 / (1 + exp(-0.00368208 cp)) - 1, cp within +-1000, a
  // mate +-1 (lichess ui/lib/src/ceval/winningChances.ts, rawWinningChances and cpWinningChances)
  function winningChances(text) {
    if (text[0] === '#') return text[1] === '-' ? -1 : 1;
    const cp = Math.max(-1000, Math.min(1000, parseFloat(text) * 100));
    return 2 / (1 + Math.exp(-0.00368208 * cp)) - 1;
  }

  const GRAPH_W = 300;
  const GRAPH_H = 80;

  // after the game: the bot's evals as a graph over the plies (the points it announced; a click shows that move)
  function renderReview() {
    const box = $('review');
    const pos = st.pos;
    const plies = pos ? Object.keys(pos.evals).map(Number).sort((a, b) => a - b) : [];
    if (!pos || !over() || !plies.length) {
      box.hidden = true;
      return;
    }
    const n = Math.max(pos.sans.length, 2);
    const x = (ply) => ((ply + 1) / n) * GRAPH_W;
    const y = (text) => (GRAPH_H / 2) * (1 - winningChances(text));
    const pts = plies.map((p) => x(p).toFixed(1) + ',' + y(pos.evals[String(p)]).toFixed(1));
    const area = 'M' + x(plies[0]).toFixed(1) + ',' + GRAPH_H / 2 + ' L' + pts.join(' L') + ' L' + x(plies[plies.length - 1]).toFixed(1) + ',' + GRAPH_H / 2 + ' Z';
    const cur = shownPly();
    const dots = plies.map((p) => '<circle class="pt' + (p + 1 === cur ? ' cur' : '') + '" data-ply="' + (p + 1) + '" cx="'
      + x(p).toFixed(1) + '" cy="' + y(pos.evals[String(p)]).toFixed(1) + '" r="3"><title>' + esc(pos.sans[p] + ' ' + pos.evals[String(p)])
      + '</title></circle>').join('');
    box.innerHTML = '<svg viewBox="0 0 ' + GRAPH_W + ' ' + GRAPH_H + '" preserveAspectRatio="none" role="img" aria-label="the bot\'s evals">'
      + '<rect class="bg" width="' + GRAPH_W + '" height="' + GRAPH_H / 2 + '"/><rect class="bg2" y="' + GRAPH_H / 2 + '" width="'
      + GRAPH_W + '" height="' + GRAPH_H / 2 + '"/><path class="area" d="' + area + '"/><polyline class="line" points="' + pts.join(' ')
      + '"/>' + (cur ? '<line class="now" x1="' + x(cur - 1).toFixed(1) + '" x2="' + x(cur - 1).toFixed(1) + '" y1="0" y2="' + GRAPH_H + '"/>' : '')
      + dots + '</svg>';
    box.hidden = false;
  }

  function bindMoves() {
    $('moves').addEventListener('click', (e) => {
      const m = e.target.closest('.m[data-ply]');
      if (m) viewPly(parseInt(m.dataset.ply, 10));
    });
    $('review').addEventListener('click', (e) => {
      const svg = $('review').querySelector('svg');
      if (!svg || !st.pos) return;
      const r = svg.getBoundingClientRect();
      const n = Math.max(st.pos.sans.length, 2);
      viewPly(Math.round(((e.clientX - r.left) / r.width) * n));
    });
    document.addEventListener('keydown', (e) => {
      if (!st.pos || e.target.closest('input, select, textarea')) return;
      const k = e.key;
      const ply = shownPly();
      if (k === 'ArrowLeft') viewPly(ply - 1);
      else if (k === 'ArrowRight') viewPly(ply + 1);
      else if (k === 'ArrowUp' || k === 'Home') viewPly(0);
      else if (k === 'ArrowDown' || k === 'End') viewPly(st.pos.sans.length);
      else return;
      e.preventDefault();
    });
  }
