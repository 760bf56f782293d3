// The game's panel of the page (a part of page.js's closure, see page-board.js): the players and their clocks,
// the buttons and offers, the result, the chat.

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
      if (running) lowTimeSound(side, t);
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

  const STATUS = {
    mate: 'Checkmate', resign: '%L resigned', stalemate: 'Stalemate', timeout: '%L left the game', draw: 'Draw',
    outoftime: '%L ran out of time', aborted: 'Game aborted', noStart: '%L did not play a first move', cheat: 'Cheat detected',
    variantEnd: 'Variant ending', unknownFinish: 'Finished', insufficientMaterialClaim: 'Insufficient material',
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
    // lila's playerCanOfferDraw (the server's canOfferDraw: 2 plies, no offer of ours in the last 20); the
    // opponent's standing offer may always be accepted
    const canOffer = !!(pos && pos.canOfferDraw && pos.canOfferDraw[st.color]);
    $('draw').disabled = !playing || !pos.drawable || !!(s && s[mine + 'draw']) || !(canOffer || s[theirs + 'draw']);
    $('resign').disabled = !playing;
    $('resign').classList.toggle('confirm', st.confirmResign);
    $('resign').textContent = st.confirmResign ? 'Confirm?' : 'Resign';
    $('takeback').textContent = s && s[mine + 'takeback'] ? 'Takeback sent' : 'Takeback';
    $('draw').innerHTML = s && s[mine + 'draw'] ? 'Draw offered' : '&#189; Draw';
    $('chat-input').disabled = !st.gameId || !st.color;
    $('answer').textContent = st.answer;
    $('answer').hidden = !playing || !st.answer;
    // the bot's turn: it is thinking. Its evals reach a player only after the game, as lichess's spectator room,
    // unless the operator shows them (--show-thinking: the figures of the bot's last search, its eval line's)
    const thinking = playing && pos.turn !== st.color;
    const t = playing ? st.thinking : null;
    const figures = t ? [t.eval, t.depth && 'depth ' + t.depth, t.nps && t.nps + ' nps'].filter(Boolean).join(' \u00B7 ') : '';
    $('thinking').hidden = !thinking && !figures;
    $('thinking').textContent = (thinking ? opponentName() + ' is thinking\u2026' : opponentName() + '\u2019s last search')
      + (figures ? (thinking ? ' (last search: ' + figures + ')' : ': ' + figures) : '');
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
      $('rematch').hidden = !st.color || !!s.rematch;
      $('rematch').disabled = !!st.rematch;
      $('rematch-msg').textContent = st.rematchText;
      $('rematch-msg').hidden = !st.rematchText;
      res.hidden = false;
    } else res.hidden = true;
    $('controls').hidden = !st.gameId;
  }

  function bindControls() {
    $('abort').onclick = () => command('abort');
    $('takeback').onclick = () => { command('takeback/yes'); answer('Takeback proposition sent'); };
    $('draw').onclick = () => { command('draw/yes'); answer('Draw offer sent'); };
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
    $('rematch').onclick = offerRematch;
    $('offer-yes').onclick = () => command($('offer').dataset.kind + '/yes');
    $('offer-no').onclick = () => command($('offer').dataset.kind + '/no');
    $('again').onclick = () => {
      if (st.stream) st.stream.abort();
      Object.assign(st, { gameId: null, full: null, state: null, pos: null, color: null, lines: [], stream: null, view: null,
        premove: null, answer: '', rematch: null, rematchText: '', thinking: null });
      sessionStorage.removeItem('lichessbot.game');
      render();
      renderChat();
      $('setup').scrollIntoView({ behavior: 'smooth' });
    };
  }

  // --- rematch ---------------------------------------------------------------------------------------------
  // lila's flow: the offer is a challenge to the opponent with ``rematchOf`` (POST /local/game/{id}/rematch), which
  // the bot accepts or declines by its config as any challenge; accepted, the old game's gameState names the new
  // game (onState opens it); declined, the challenge says why. lila's words (modules/round Rematcher.scala, the
  // translation keys rematchOfferSent, rematchOfferDeclined).
  async function offerRematch() {
    const gid = st.gameId;
    st.rematch = 'sent';
    rematchMessage('Rematch offer sent');  // at once, as lila: the bot may accept before the answer arrives
    const r = await api('POST', '/local/game/' + gid + '/rematch');
    if (st.gameId !== gid) return;  // accepted already: the new game is open
    if (!r.ok) {
      st.rematch = null;
      rematchMessage(errorText(r.body));
      return;
    }
    const id = r.body.id;
    st.rematch = id;
    while (st.gameId === gid && st.rematch === id) {
      await new Promise((ok) => setTimeout(ok, 500));
      if (st.gameId !== gid || st.rematch !== id) return;
      const show = await api('GET', '/api/challenge/' + id + '/show');
      const status = show.ok ? show.body.status : null;
      if (status === 'accepted') {
        join(id);  // the game's id is its challenge's
        return;
      }
      if (status === 'declined' || status === 'canceled') {
        st.rematch = null;
        rematchMessage('Rematch offer declined' + (show.body.declineReason ? ': ' + show.body.declineReason : ''));
      }
    }
  }

  function rematchMessage(text) {
    st.rematchText = text;
    renderControls();
  }

  // --- chat -------------------------------------------------------------------------------------------------
  function renderChat() {
    const ol = $('lines');
    const hidden = st.room === 'spectator' && st.color && !over();
    ol.innerHTML = (hidden ? '<li class="system">The spectator room is for those who watch this game (open its '
      + 'address in another tab); you see it when the game is over.</li>' : '') + st.lines.filter((l) => l.room === st.room).map((l) => {
      if (l.system) return '<li class="system">' + esc(l.text) + '</li>';
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
