// The page where a person plays the bot: a Board API client of the embedded lichess (fetch and NDJSON streams,
// one token per tab kept in sessionStorage). The server sends the positions and the legal destinations, so the
// page knows no chess rules. window.LOCAL: {bot, version, status?, defaults?}.
(() => {
  'use strict';
  const S = window.LOCAL || {};
  const BOT = S.bot || 'lichessbot';
  const $ = (id) => document.getElementById(id);
  const GLYPH = { k: '\u265A', q: '\u265B', r: '\u265C', b: '\u265D', n: '\u265E', p: '\u265F' };
  const TCS = [[1, 0], [2, 1], [3, 0], [3, 2], [5, 0], [5, 3], [10, 0], [10, 5], [15, 10], [30, 0], [30, 20], [60, 0]];
  const FILES = 'abcdefgh';

  // what the page knows; window.localGame lets a test read it
  const st = {
    token: null, username: null, gameId: null, color: null, orientation: 'white', full: null, state: null,
    pos: null, at: 0, selected: null, room: 'player', lines: [], stream: null, challenge: null, confirmResign: false,
  };
  window.localGame = st;

  // --- the server -------------------------------------------------------------------------------------------
  async function api(method, path, form) {
    const init = { method, headers: { Authorization: 'Bearer ' + st.token } };
    if (form) {
      init.body = new URLSearchParams(form);
      init.headers['Content-Type'] = 'application/x-www-form-urlencoded';
    }
    const r = await fetch(path, init);
    let body = null;
    try { body = await r.json(); } catch (e) { body = null; }
    return { ok: r.ok, status: r.status, body };
  }

  function errorText(body) {
    if (!body) return 'no answer';
    const e = body.error;
    if (typeof e === 'string') return e;
    if (e && typeof e === 'object') return Object.values(e).flat().join('; ');
    return JSON.stringify(body);
  }

  async function readLines(response, onLine, signal) {
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buf = '';
    for (;;) {
      if (signal && signal.aborted) return;
      const { value, done } = await reader.read();
      if (done) return;
      buf += decoder.decode(value, { stream: true });
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i).trim();
        buf = buf.slice(i + 1);
        if (line) onLine(JSON.parse(line));
      }
    }
  }

  async function session() {
    const r = await fetch('/local/session', {
      method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: sessionStorage.getItem('lichessbot.token') || '' }),
    });
    const body = await r.json();
    st.token = body.token;
    st.username = body.username;
    sessionStorage.setItem('lichessbot.token', st.token);
  }

  // --- the setup form -------------------------------------------------------------------------------------
  let tc = [5, 3];
  let color = 'random';

  function speedOf(m, i) {
    const est = m * 60 + 40 * i;
    return est < 180 ? 'bullet' : est < 480 ? 'blitz' : est < 1500 ? 'rapid' : 'classical';
  }

  function buildSetup() {
    document.querySelectorAll('.botname').forEach((e) => { e.textContent = BOT; });
    const box = $('tcs');
    for (const [m, i] of TCS) {
      const b = document.createElement('button');
      b.type = 'button';
      b.dataset.tc = m + '+' + i;
      b.innerHTML = m + '+' + i + '<small>' + speedOf(m, i) + '</small>';
      b.onclick = () => setTc(m, i);
      box.appendChild(b);
    }
    $('minutes').oninput = $('increment').oninput = () => {
      tc = [parseFloat($('minutes').value) || 0, parseInt($('increment').value, 10) || 0];
      markTc();
    };
    document.querySelectorAll('#colors button').forEach((b) => {
      b.onclick = () => {
        color = b.dataset.color;
        document.querySelectorAll('#colors button').forEach((x) => x.classList.toggle('active', x === b));
      };
    });
    const d = S.defaults || {};
    if (d.clock) {
      const [m, i] = d.clock.split('+').map(Number);
      setTc(m, i);
    } else setTc(5, 3);
    if (d.color) document.querySelector('#colors [data-color="' + d.color + '"]').click();
    if (d.fen) $('fen').value = d.fen;
    if (d.variant) $('variant').value = d.variant;
    $('play').onclick = play;
    if (S.status) {
      $('status-link').href = S.status;
      $('status-link').hidden = false;
    }
  }

  function setTc(m, i) {
    tc = [m, i];
    $('minutes').value = m;
    $('increment').value = i;
    markTc();
  }

  function markTc() {
    document.querySelectorAll('#tcs button').forEach((b) => b.classList.toggle('active', b.dataset.tc === tc[0] + '+' + tc[1]));
  }

  function setupMessage(text, error, cancel) {
    const m = $('setup-msg');
    m.textContent = text;
    m.classList.toggle('error', !!error);
    if (cancel) {
      const b = document.createElement('button');
      b.type = 'button';
      b.textContent = 'Cancel';
      b.onclick = cancel;
      m.appendChild(b);
    }
  }

  async function play() {
    const form = {
      rated: 'false', 'clock.limit': String(Math.round(tc[0] * 60)), 'clock.increment': String(tc[1]), color,
      variant: $('variant').value, keepAliveStream: 'true',
    };
    const fen = $('fen').value.trim();
    if (fen) form.fen = fen;
    $('play').disabled = true;
    setupMessage('Challenging ' + BOT + '\u2026');
    try {
      const r = await fetch('/api/challenge/' + encodeURIComponent(BOT), {
        method: 'POST', body: new URLSearchParams(form),
        headers: { Authorization: 'Bearer ' + st.token, 'Content-Type': 'application/x-www-form-urlencoded' },
      });
      if (!r.ok) {
        let body = null;
        try { body = await r.json(); } catch (e) { body = null; }
        setupMessage(errorText(body), true);
        return;
      }
      let done = null;
      await readLines(r, (line) => {
        if (line.id && !st.challenge) {
          st.challenge = line.id;
          setupMessage('Waiting for ' + BOT + ' to accept\u2026', false, cancelChallenge);
        } else if (line.done) done = line.done;
      });
      const id = st.challenge;
      st.challenge = null;
      if (done === 'accepted') {
        setupMessage('');
        join(id);
      } else if (done === 'declined') {
        const show = await api('GET', '/api/challenge/' + id + '/show');
        setupMessage(BOT + ' declined: ' + ((show.body && show.body.declineReason) || 'no reason given'), true);
      } else setupMessage(done === 'canceled' ? 'Challenge canceled.' : 'The server ended the challenge.', done !== 'canceled');
    } catch (e) {
      setupMessage('The server cannot be reached: ' + e.message, true);
    } finally {
      $('play').disabled = false;
    }
  }

  async function cancelChallenge() {
    if (st.challenge) await api('POST', '/api/challenge/' + st.challenge + '/cancel');
  }

  // --- a game -----------------------------------------------------------------------------------------------
  async function join(id) {
    if (st.stream) st.stream.abort();
    const ctl = new AbortController();
    Object.assign(st, { gameId: id, stream: ctl, full: null, state: null, pos: null, selected: null, lines: [] });
    sessionStorage.setItem('lichessbot.game', id);
    renderChat();
    for (let attempt = 0; !ctl.signal.aborted; attempt++) {
      try {
        const r = await fetch('/local/game/' + id + '/stream', {
          headers: { Authorization: 'Bearer ' + st.token }, signal: ctl.signal,
        });
        if (r.status === 404) {
          sessionStorage.removeItem('lichessbot.game');
          footer('That game is not on this server any more.');
          return;
        }
        st.lines = [];
        await readLines(r, onLine, ctl.signal);
      } catch (e) {
        if (ctl.signal.aborted) return;
      }
      footer('Connection lost: reconnecting\u2026');
      await new Promise((ok) => setTimeout(ok, Math.min(5000, 500 * (attempt + 1))));
    }
  }

  function onLine(line) {
    switch (line.type) {
      case 'gameFull':
        st.full = line;
        st.color = line.white.id === (st.username || '').toLowerCase() ? 'white'
          : line.black.id === (st.username || '').toLowerCase() ? 'black' : null;
        st.orientation = st.color || 'white';
        onState(line.state);
        footer('');
        break;
      case 'gameState': onState(line); break;
      case 'position': st.pos = line; st.selected = null; render(); break;
      case 'chatLine': st.lines.push(line); renderChat(); break;
      default: break;
    }
  }

  function onState(s) {
    st.state = s;
    st.at = performance.now();
  }

  const over = () => !!st.state && !['created', 'started'].includes(st.state.status);
  const myTurn = () => !!st.pos && !over() && st.pos.turn === st.color;

  async function move(uci) {
    st.selected = null;
    const r = await api('POST', '/api/board/game/' + st.gameId + '/move/' + uci);
    if (!r.ok) footer('Move refused: ' + errorText(r.body));
    render();
  }

  async function command(path) {
    const r = await api('POST', '/api/board/game/' + st.gameId + '/' + path);
    if (!r.ok) footer(errorText(r.body));
  }

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
    const pos = st.pos;
    const map = pos ? pieces(pos.fen) : pieces('rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR');
    const last = pos && pos.lastMove ? [pos.lastMove.slice(0, 2), pos.lastMove.slice(2, 4)] : [];
    const dests = st.selected && pos && pos.dests[st.selected] ? pos.dests[st.selected] : [];
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
        + (st.selected === sq ? ' sel' : '') + (dests.includes(sq) ? ' dest' + (p ? ' occupied' : '') : '')
        + (pos && pos.check === sq ? ' check' : '');
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
    const sq = squareAt(e.clientX, e.clientY);
    if (!sq) return;
    if (st.selected && st.selected !== sq && (st.pos.dests[st.selected] || []).includes(sq)) {
      tryMove(st.selected, sq);
      return;
    }
    const p = pieces(st.pos.fen)[sq];
    const mine = p && (p === p.toUpperCase() ? 'white' : 'black') === st.color;
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
      if (to && to !== d.from && (st.pos.dests[d.from] || []).includes(to)) tryMove(d.from, to);
      return;
    }
    if (d.wasSelected) {
      st.selected = null;
      renderBoard();
    }
  }

  function tryMove(from, to) {
    if (!myTurn()) {
      st.selected = null;
      renderBoard();
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

  // --- players, clocks, moves, controls -------------------------------------------------------------------
  function playerHtml(p) {
    if (!p) return '&nbsp;';
    const t = p.title ? '<span class="title">' + esc(p.title) + '</span>' : '';
    return t + esc(p.name || p.id || '?') + (p.rating ? '<span class="rating">' + p.rating + '</span>' : '');
  }

  function esc(s) {
    return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
  }

  function renderPlayers() {
    const f = st.full;
    const top = st.orientation === 'white' ? 'black' : 'white';
    const bottom = st.orientation;
    $('top-name').innerHTML = f ? playerHtml(f[top]) : esc(BOT);
    $('bottom-name').innerHTML = f ? playerHtml(f[bottom]) : esc(st.username || 'you');
    renderClocks();
  }

  function clockText(ms) {
    ms = Math.max(0, ms);
    const s = Math.floor(ms / 1000);
    const h = Math.floor(s / 3600);
    const m = Math.floor((s % 3600) / 60);
    const sec = s % 60;
    const pad = (n) => String(n).padStart(2, '0');
    if (h) return h + ':' + pad(m) + ':' + pad(sec);
    if (ms < 10000) return pad(m) + ':' + pad(sec) + '.' + Math.floor((ms % 1000) / 100);
    return pad(m) + ':' + pad(sec);
  }

  function timeOf(side) {
    const s = st.state;
    if (!s) return null;
    let t = side === 'white' ? s.wtime : s.btime;
    if (st.pos && st.pos.clockRunning && !over() && st.pos.turn === side) t -= performance.now() - st.at;
    return t;
  }

  function renderClocks() {
    const hasClock = st.full && st.full.clock;
    for (const [where, side] of [['top', st.orientation === 'white' ? 'black' : 'white'], ['bottom', st.orientation]]) {
      const el = $(where + '-clock');
      if (!hasClock) {
        el.textContent = '';
        el.className = 'clock';
        el.hidden = true;
        continue;
      }
      el.hidden = false;
      const t = timeOf(side);
      el.textContent = clockText(t);
      const running = st.pos && st.pos.clockRunning && !over() && st.pos.turn === side;
      el.className = 'clock' + (running ? ' running' : '') + (running && t < 10000 ? ' low' : '');
    }
    const n = $('notice');
    const exp = st.pos && st.pos.expiresIn;
    if (exp !== null && exp !== undefined && !over()) {
      const left = Math.max(0, Math.ceil((exp - (performance.now() - st.at)) / 1000));
      const who = st.pos.turn === st.color ? 'You have' : (st.full ? opponentName() + ' has' : BOT + ' has');
      n.textContent = who + ' ' + left + ' seconds to play the first move';
      n.hidden = false;
    } else n.hidden = true;
  }

  function opponentName() {
    if (!st.full || !st.color) return BOT;
    const o = st.full[st.color === 'white' ? 'black' : 'white'];
    return o.name || o.id;
  }

  function renderMoves() {
    const box = $('moves');
    const pos = st.pos;
    if (!pos) {
      box.innerHTML = '';
      return;
    }
    const fen = st.full && st.full.initialFen !== 'startpos' ? st.full.initialFen.split(' ') : null;
    let no = fen ? parseInt(fen[5] || '1', 10) : 1;
    const n = pos.sans.length;
    const evalOf = (i) => (pos.evals[String(i)] ? '<span class="ev">' + esc(pos.evals[String(i)]) + '</span>' : '');
    const cell = (i) => (i < n ? '<div class="m' + (i === n - 1 ? ' last' : '') + '">' + esc(pos.sans[i]) + evalOf(i)
      + '</div>' : '<div class="m"></div>');
    const out = [];
    let i = 0;
    if (fen && fen[1] === 'b' && n) {
      out.push('<div class="n">' + no + '</div><div class="m">\u2026</div>' + cell(0));
      i = 1;
      no++;
    }
    for (; i < n; i += 2, no++) out.push('<div class="n">' + no + '</div>' + cell(i) + cell(i + 1));
    box.innerHTML = out.join('');
    box.scrollTop = box.scrollHeight;
  }

  const STATUS = {
    mate: 'Checkmate', resign: '%L resigned', stalemate: 'Stalemate', timeout: '%L left the game', draw: 'Draw',
    outoftime: '%L ran out of time', aborted: 'Game aborted', noStart: '%L did not play a first move', cheat: 'Cheat detected',
    variantEnd: 'Variant ending', unknownFinish: 'Finished',
  };

  function renderControls() {
    const s = st.state;
    const pos = st.pos;
    const playing = !!(st.color && s && pos && !over());
    const mine = st.color === 'white' ? 'w' : 'b';
    const theirs = st.color === 'white' ? 'b' : 'w';
    $('abort').hidden = !(playing && pos.abortable);
    $('takeback').hidden = !playing || pos.abortable;
    $('draw').hidden = !playing || pos.abortable;
    $('resign').hidden = !playing;
    $('takeback').disabled = !playing || !!(s && s[mine + 'takeback']);
    $('draw').disabled = !playing || !pos.drawable || !!(s && s[mine + 'draw']);
    $('resign').disabled = !playing;
    $('resign').classList.toggle('confirm', st.confirmResign);
    $('resign').textContent = st.confirmResign ? 'Confirm?' : 'Resign';
    $('takeback').textContent = s && s[mine + 'takeback'] ? 'Takeback sent' : 'Takeback';
    $('draw').innerHTML = s && s[mine + 'draw'] ? 'Draw offered' : '&#189; Draw';
    $('chat-input').disabled = !st.gameId || !st.color;
    const offer = $('offer');
    if (playing && s[theirs + 'draw']) {
      $('offer-text').textContent = opponentName() + ' offers a draw';
      offer.dataset.kind = 'draw';
      offer.hidden = false;
    } else if (playing && s[theirs + 'takeback']) {
      $('offer-text').textContent = opponentName() + ' proposes a takeback';
      offer.dataset.kind = 'takeback';
      offer.hidden = false;
    } else offer.hidden = true;
    const res = $('result');
    if (s && over()) {
      const score = s.winner === 'white' ? '1-0' : s.winner === 'black' ? '0-1'
        : ['aborted', 'noStart'].includes(s.status) ? '*' : '\u00BD-\u00BD';
      const loser = s.winner ? (s.winner === 'white' ? 'Black' : 'White') : (pos && pos.turn === 'white' ? 'White' : 'Black');
      const text = (STATUS[s.status] || s.status).replace('%L', loser);
      const won = s.winner ? (s.winner === 'white' ? 'White' : 'Black') + ' is victorious' : '';
      $('score').textContent = score;
      $('reason').textContent = text + (won ? ' \u2022 ' + won : '');
      $('pgn').href = '/game/export/' + st.gameId;
      $('pgn').setAttribute('download', 'lichessbot_' + st.gameId + '.pgn');
      res.hidden = false;
    } else res.hidden = true;
    $('controls').hidden = !st.gameId;
  }

  function bindControls() {
    $('abort').onclick = () => command('abort');
    $('takeback').onclick = () => command('takeback/yes');
    $('draw').onclick = () => command('draw/yes');
    $('resign').onclick = () => {
      if (!st.confirmResign) {
        st.confirmResign = true;
        renderControls();
        setTimeout(() => { st.confirmResign = false; renderControls(); }, 3000);
        return;
      }
      st.confirmResign = false;
      command('resign');
    };
    $('flip').onclick = () => {
      st.orientation = st.orientation === 'white' ? 'black' : 'white';
      render();
    };
    $('offer-yes').onclick = () => command($('offer').dataset.kind + '/yes');
    $('offer-no').onclick = () => command($('offer').dataset.kind + '/no');
    $('again').onclick = () => {
      if (st.stream) st.stream.abort();
      Object.assign(st, { gameId: null, full: null, state: null, pos: null, color: null, lines: [], stream: null });
      sessionStorage.removeItem('lichessbot.game');
      render();
      renderChat();
      $('setup').scrollIntoView({ behavior: 'smooth' });
    };
  }

  // --- chat -------------------------------------------------------------------------------------------------
  function renderChat() {
    const ol = $('lines');
    const hidden = st.room === 'spectator' && st.color && !over();
    ol.innerHTML = (hidden ? '<li class="system">The spectator room is for those who watch this game (open its '
      + 'address in another tab); you see it when the game is over.</li>' : '') + st.lines.filter((l) => l.room === st.room).map((l) => {
      const bot = st.full && ((st.full.white.id === l.username.toLowerCase() && st.full.white.title === 'BOT')
        || (st.full.black.id === l.username.toLowerCase() && st.full.black.title === 'BOT'));
      return '<li><span class="user' + (bot ? ' bot' : '') + '">' + esc(l.username) + '</span>' + esc(l.text) + '</li>';
    }).join('');
    ol.scrollTop = ol.scrollHeight;
  }

  function bindChat() {
    document.querySelectorAll('.tabs button').forEach((b) => {
      b.onclick = () => {
        st.room = b.dataset.room;
        document.querySelectorAll('.tabs button').forEach((x) => x.classList.toggle('active', x === b));
        renderChat();
      };
    });
    $('chat-form').onsubmit = async (e) => {
      e.preventDefault();
      const input = $('chat-input');
      const text = input.value.trim();
      if (!text || !st.gameId) return;
      input.value = '';
      const r = await api('POST', '/api/board/game/' + st.gameId + '/chat', { room: st.room, text });
      if (!r.ok) footer(errorText(r.body));
    };
  }

  function footer(text) {
    $('footer').textContent = text || ('lichessbot ' + (S.version || '') + ' \u2022 playing as ' + (st.username || '?'));
  }

  // --- start ------------------------------------------------------------------------------------------------
  async function start() {
    buildBoard();
    buildSetup();
    bindControls();
    bindChat();
    render();
    try {
      await session();
    } catch (e) {
      footer('The server cannot be reached.');
      return;
    }
    footer('');
    // a reload rejoins: the game in progress first, else the game this tab showed
    const playing = await api('GET', '/api/account/playing');
    const now = playing.ok && playing.body.nowPlaying.length ? playing.body.nowPlaying[0].gameId : null;
    const fromPath = /^\/[A-Za-z0-9]{8}$/.test(location.pathname) ? location.pathname.slice(1) : null;
    const id = now || fromPath || sessionStorage.getItem('lichessbot.game');
    if (id) join(id);
    setInterval(renderClocks, 100);
  }

  start();
})();
