// The board of the page (a part of page.js's closure: page.py joins page.js, page-board.js, page-moves.js and
// page-sound.js in one script): squares, click and drag moves, the promotion choice, the premove.
  // --- the board --------------------------------------------------------------------------------------------
  const board = $('board');
  const squares = {};

  function buildBoard() {
    for (let i = 0; i < 64; i++) {
      const d = document.createElement('div');
      board.appendChild(d);
    }
    board.addEventListener('pointerdown', onDown);
    window.addEventListener('pointermove', onDragMove);
    window.addEventListener('pointerup', onUp);
  }

  function squareAt(x, y) {
    const r = board.getBoundingClientRect();
    const f = Math.floor((x - r.left) / (r.width / 8));
    const k = Math.floor((y - r.top) / (r.height / 8));
    if (f < 0 || f > 7 || k < 0 || k > 7) return null;
    return st.orientation === 'white' ? FILES[f] + (8 - k) : FILES[7 - f] + (k + 1);
  }

  function pieces(fen) {
    const out = {};
    const rows = fen.split(' ')[0].split('/');
    rows.forEach((row, i) => {
      let f = 0;
      for (const c of row) {
        if (/\d/.test(c)) f += parseInt(c, 10);
        else {
          out[FILES[f] + (8 - i)] = c;
          f++;
        }
      }
    });
    return out;
  }

  function render() {
    renderBoard();
    renderPlayers();
    renderMoves();
    renderControls();
    renderInfo();
    scrollMoves();
  }

  // during a game the form gives way to the game's facts, as on lichess
  function renderInfo() {
    const f = st.full;
    const playing = !!(st.gameId && f && !over());
    $('setup').hidden = playing;
    $('info').hidden = !f;
    if (!f) return;
    const tc = f.clock ? (f.clock.initial / 60000) + '+' + (f.clock.increment / 1000)
      : f.daysPerTurn ? f.daysPerTurn + ' days' : '∞';
    $('info-tc').textContent = tc + ' • ' + (f.rated ? 'Rated' : 'Casual') + ' • ' + f.perf.name
      + (f.variant.key !== 'standard' ? ' • ' + f.variant.name : '');
    $('info-players').innerHTML = ['white', 'black'].map((c) => '<div><span class="dot ' + c + '"></span>'
      + playerHtml(f[c]) + '</div>').join('');
    const url = location.origin + '/' + f.id;
    $('info-url').href = url;
    $('info-url').textContent = url.replace(/^https?:\/\//, '');
  }

  function renderBoard() {
    const pos = shownPosition();
    const map = pos ? pieces(pos.fen) : pieces('rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR');
    const last = pos && pos.lastMove ? [pos.lastMove.slice(0, 2), pos.lastMove.slice(2, 4)] : [];
    const dests = st.selected && pos ? destsOf(st.selected) : [];
    const pre = st.premove && !browsing() ? [st.premove.from, st.premove.to] : [];
    const cells = board.children;
    for (let i = 0; i < 64; i++) {
      const f = i % 8;
      const k = Math.floor(i / 8);
      const sq = st.orientation === 'white' ? FILES[f] + (8 - k) : FILES[7 - f] + (k + 1);
      const cell = cells[i];
      squares[sq] = cell;
      const light = (FILES.indexOf(sq[0]) + parseInt(sq[1], 10)) % 2 === 1;
      const p = map[sq];
      cell.className = 'sq ' + (light ? 'light' : 'dark') + (last.includes(sq) ? ' last' : '')
        + (st.selected === sq ? ' sel' : '') + (dests.includes(sq) ? ' dest' + (myTurn() ? '' : ' pre') + (p ? ' occupied' : '') : '')
        + (pos && pos.check === sq ? ' check' : '') + (pre.includes(sq) ? ' premove' : '');
      cell.dataset.square = sq;
      let html = '';
      if (p) {
        const white = p === p.toUpperCase();
        const mine = st.color && (white ? 'white' : 'black') === st.color;
        html += '<span class="piece ' + (white ? 'white' : 'black') + (mine ? ' mine' : '') + '">'
          + GLYPH[p.toLowerCase()] + '\uFE0E</span>';
      }
      if (k === 7) html += '<span class="coord file">' + sq[0] + '</span>';
      if (f === 0) html += '<span class="coord rank">' + sq[1] + '</span>';
      cell.innerHTML = html;
    }
  }

  // click to move, or drag
  let drag = null;

  function onDown(e) {
    if (e.button !== 0 || !st.pos || over() || !st.color) return;
    if (browsing()) {  // as lichess: a click on the board while browsing goes back to the game
      viewPly(st.pos.sans.length);
      return;
    }
    const sq = squareAt(e.clientX, e.clientY);
    if (!sq) return;
    if (st.selected && st.selected !== sq && destsOf(st.selected).includes(sq)) {
      tryMove(st.selected, sq);
      return;
    }
    const p = pieces(st.pos.fen)[sq];
    const mine = p && (p === p.toUpperCase() ? 'white' : 'black') === st.color;
    if (st.premove) cancelPremove();  // a click elsewhere cancels the premove (as lichess)
    if (!mine) {
      st.selected = null;
      renderBoard();
      return;
    }
    const wasSelected = st.selected === sq;
    st.selected = sq;
    renderBoard();
    drag = { from: sq, wasSelected, x: e.clientX, y: e.clientY, ghost: null };
    e.preventDefault();
  }

  function onDragMove(e) {
    if (!drag) return;
    if (!drag.ghost && Math.hypot(e.clientX - drag.x, e.clientY - drag.y) > 4) {
      const src = squares[drag.from].querySelector('.piece');
      if (!src) return;
      drag.ghost = src.cloneNode(true);
      drag.ghost.classList.add('ghost');
      document.body.appendChild(drag.ghost);
      squares[drag.from].classList.add('dragging');
    }
    if (drag.ghost) {
      drag.ghost.style.left = e.clientX + 'px';
      drag.ghost.style.top = e.clientY + 'px';
    }
  }

  function onUp(e) {
    if (!drag) return;
    const d = drag;
    drag = null;
    if (d.ghost) {
      d.ghost.remove();
      squares[d.from].classList.remove('dragging');
      const to = squareAt(e.clientX, e.clientY);
      if (to && to !== d.from && destsOf(d.from).includes(to)) tryMove(d.from, to);
      return;
    }
    if (d.wasSelected) {
      st.selected = null;
      renderBoard();
    }
  }

  function tryMove(from, to) {
    if (!myTurn()) {
      setPremove(from, to);
      return;
    }
    const p = pieces(st.pos.fen)[from];
    if (p && p.toLowerCase() === 'p' && (to[1] === '8' || to[1] === '1')) {
      choosePromotion(from, to);
      return;
    }
    move(from + to);
  }

  function choosePromotion(from, to) {
    const box = $('promotion');
    box.innerHTML = '';
    for (const role of ['q', 'n', 'r', 'b']) {
      const b = document.createElement('button');
      b.type = 'button';
      b.dataset.role = role;
      b.innerHTML = '<span class="piece ' + st.color + '">' + GLYPH[role] + '\uFE0E</span>';
      b.onclick = () => {
        box.hidden = true;
        move(from + to + role);
      };
      box.appendChild(b);
    }
    box.onclick = (e) => {
      if (e.target === box) {
        box.hidden = true;
        st.selected = null;
        renderBoard();
      }
    };
    box.hidden = false;
  }


  // --- premove: one, as lichess (chessground's premove): on the bot's turn a piece of ours goes where its kind
  // may go on an empty board (the server judges the move); the bot's move played, the premove is played at once
  // when legal, else dropped; a click elsewhere or a right-click cancels it. A pawn reaching the last rank queens
  // (lila's default autoQueen: "when premoving").
  function destsOf(sq) {
    if (!st.pos || !st.color) return [];
    if (myTurn()) return st.pos.dests[sq] || [];
    return over() ? [] : premoveDests(sq);
  }

  function premoveDests(sq) {
    const p = pieces(st.pos.fen)[sq];
    if (!p) return [];
    const f = FILES.indexOf(sq[0]);
    const r = parseInt(sq[1], 10) - 1;
    const white = p === p.toUpperCase();
    const out = [];
    const add = (df, dr) => {
      const x = f + df;
      const y = r + dr;
      if (x >= 0 && x < 8 && y >= 0 && y < 8) out.push(FILES[x] + (y + 1));
    };
    const ray = (df, dr) => { for (let i = 1; i < 8; i++) add(df * i, dr * i); };
    const kind = p.toLowerCase();
    const rook = [[1, 0], [-1, 0], [0, 1], [0, -1]];
    const bishop = [[1, 1], [1, -1], [-1, 1], [-1, -1]];
    if (kind === 'p') {
      const dir = white ? 1 : -1;
      add(0, dir);
      if (r === (white ? 1 : 6)) add(0, 2 * dir);
      add(-1, dir);
      add(1, dir);
    } else if (kind === 'n') {
      for (const [a, b] of [[1, 2], [2, 1], [2, -1], [1, -2], [-1, -2], [-2, -1], [-2, 1], [-1, 2]]) add(a, b);
    } else if (kind === 'k') {
      for (const [a, b] of rook.concat(bishop)) add(a, b);
      if (f === 4 && r === (white ? 0 : 7)) {
        add(2, 0);
        add(-2, 0);
      }
    } else {
      for (const [a, b] of kind === 'r' ? rook : kind === 'b' ? bishop : rook.concat(bishop)) ray(a, b);
    }
    return out;
  }

  function setPremove(from, to) {
    const p = pieces(st.pos.fen)[from];
    const promo = p && p.toLowerCase() === 'p' && (to[1] === '8' || to[1] === '1') ? 'q' : '';
    st.premove = { from, to, promo };
    st.selected = null;
    renderBoard();
  }

  function cancelPremove() {
    st.premove = null;
    renderBoard();
  }

  // a new position: our turn with a premove set plays it when legal (else it is dropped)
  function playPremove() {
    const pre = st.premove;
    if (!pre || !myTurn()) return;
    st.premove = null;
    if ((st.pos.dests[pre.from] || []).includes(pre.to)) move(pre.from + pre.to + pre.promo);
    else renderBoard();
  }

  function bindBoardMenu() {
    board.addEventListener('contextmenu', (e) => {
      e.preventDefault();
      st.selected = null;
      if (st.premove) cancelPremove();
      else renderBoard();
    });
  }
