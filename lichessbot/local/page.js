// The page where a person plays the bot: a Board API client of the embedded lichess (fetch and NDJSON streams,
// one token per tab kept in sessionStorage). The server sends the positions and the legal destinations, so the
// page knows no chess rules. window.LOCAL: {bot, version, status?, defaults?}.
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
    view: null, premove: null, answer: '', rematch: null, rematchText: '', thinking: null, sounds: [],
    muted: localStorage.getItem('lichessbot.sound') === 'off',
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
        if (line && !(signal && signal.aborted)) onLine(JSON.parse(line));  // a stream left stays silent
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

  // the form's choices kept in localStorage (as lichess keeps its setup), the command's defaults otherwise
  const SETUP_KEY = 'lichessbot.setup';

  function savedSetup() {
    try { return JSON.parse(localStorage.getItem(SETUP_KEY) || 'null') || {}; } catch (e) { return {}; }
  }

  function saveSetup() {
    localStorage.setItem(SETUP_KEY, JSON.stringify({
      clock: tc[0] + '+' + tc[1], color, variant: $('variant').value, fen: $('fen').value.trim(),
    }));
  }

  function buildSetup() {
    document.querySelectorAll('.botname').forEach((e) => { e.textContent = BOT; });
    const box = $('tcs');
    for (const [m, i] of TCS) {
      const b = document.createElement('button');
      b.type = 'button';
      b.dataset.tc = m + '+' + i;
      b.innerHTML = m + '+' + i + '<small>' + speedOf(m, i) + '</small>';
      b.onclick = () => { setTc(m, i); saveSetup(); };
      box.appendChild(b);
    }
    $('minutes').oninput = $('increment').oninput = () => {
      tc = [parseFloat($('minutes').value) || 0, parseInt($('increment').value, 10) || 0];
      markTc();
      saveSetup();
    };
    $('variant').onchange = $('fen').onchange = saveSetup;
    document.querySelectorAll('#colors button').forEach((b) => {
      b.onclick = () => {
        color = b.dataset.color;
        document.querySelectorAll('#colors button').forEach((x) => x.classList.toggle('active', x === b));
        saveSetup();
      };
    });
    const d = Object.assign({}, S.defaults || {}, savedSetup());
    if (d.clock) {
      const [m, i] = d.clock.split('+').map(Number);
      setTc(m, i);
    } else setTc(5, 3);
    if (d.color) document.querySelector('#colors [data-color="' + d.color + '"]').click();
    if (d.fen !== undefined) $('fen').value = d.fen;
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
    Object.assign(st, { gameId: id, stream: ctl, full: null, state: null, pos: null, selected: null, lines: [], view: null,
      premove: null, answer: '', rematch: null, rematchText: '', thinking: null });
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
      case 'position': onPosition(line); break;
      case 'chatLine': st.lines.push(line); renderChat(); break;
      case 'thinking': st.thinking = line; renderControls(); break;  // the operator's --show-thinking
      default: break;
    }
  }

  function onPosition(line) {
    const before = st.pos && st.pos.sans.length;
    const same = st.pos && st.full && st.pos.fens && st.pos.fens[0] === line.fens[0];
    st.pos = line;
    if (st.selected && !destsOf(st.selected).length) st.selected = null;
    if (same && line.sans.length === before + 1) moveSound(line.sans[line.sans.length - 1]);
    if (st.view !== null && st.view > line.sans.length) st.view = null;
    playPremove();
    render();
  }

  // lila's words for the answers to our offers (lila translation keys drawOfferAccepted, drawOfferDeclined,
  // takebackPropositionAccepted, takebackPropositionDeclined), shown under the moves and in the chat as lichess
  function onState(s) {
    const prev = st.state;
    st.state = s;
    st.at = performance.now();
    if (!prev || !st.color) return;
    // our rematch was accepted: the old game names the new one and both players go there (lila Rematcher, the
    // round's ``redirect``; BotJsonView gameState ``rematch``)
    if (s.rematch && !prev.rematch && st.gameId !== s.rematch) {
      join(s.rematch);
      return;
    }
    const me = st.color[0];
    const plies = (x) => (x.moves ? x.moves.split(' ').length : 0);
    if (prev[me + 'draw'] && !s[me + 'draw']) answer(s.status === 'draw' ? 'Draw offer accepted' : 'Draw offer declined');
    if (prev[me + 'takeback'] && !s[me + 'takeback']) {
      answer(plies(s) < plies(prev) ? 'Takeback proposition accepted' : 'Takeback proposition declined');
    }
  }

  function answer(text) {
    st.answer = text;
    st.lines.push({ type: 'chatLine', room: 'player', system: true, text });
    renderChat();
    renderControls();
  }

  const over = () => !!st.state && !['created', 'started'].includes(st.state.status);
  const myTurn = () => !!st.pos && !over() && st.pos.turn === st.color;

  async function move(uci) {
    st.selected = null;
    st.answer = '';
    const r = await api('POST', '/api/board/game/' + st.gameId + '/move/' + uci);
    if (!r.ok) footer('Move refused: ' + errorText(r.body));
    render();
  }

  async function command(path) {
    const r = await api('POST', '/api/board/game/' + st.gameId + '/' + path);
    if (!r.ok) footer(errorText(r.body));
  }

  // --- start ------------------------------------------------------------------------------------------------
  async function start() {
    buildBoard();
    bindBoardMenu();
    buildSetup();
    bindControls();
    bindChat();
    bindMoves();
    bindSound();
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
