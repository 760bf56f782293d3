// The sounds of the page (a part of page.js's closure, see page-board.js): a move, a capture, a check and low
// time, as lichess plays them, made here with WebAudio (no sound file: the page loads nothing from outside);
// the speaker button mutes them, remembered in localStorage. st.sounds lists what was played (for the tests).

  let audio = null;

  // a short tone: frequency (Hz), length (s), loudness (0..1), waveform
  function tone(freq, secs, gain, type, delay) {
    try {
      audio = audio || new AudioContext();
      const t = audio.currentTime + (delay || 0);
      const osc = audio.createOscillator();
      const amp = audio.createGain();
      osc.type = type;
      osc.frequency.setValueAtTime(freq, t);
      amp.gain.setValueAtTime(gain, t);
      amp.gain.exponentialRampToValueAtTime(0.0001, t + secs);
      osc.connect(amp).connect(audio.destination);
      osc.start(t);
      osc.stop(t + secs);
    } catch (e) {
      // no audio device: silence
    }
  }

  const SOUNDS = {
    move: () => tone(520, 0.07, 0.25, 'triangle'),
    capture: () => { tone(300, 0.1, 0.35, 'square'); tone(180, 0.12, 0.25, 'triangle', 0.02); },
    check: () => { tone(880, 0.09, 0.2, 'sine'); tone(1175, 0.12, 0.2, 'sine', 0.09); },
    lowtime: () => { tone(660, 0.15, 0.2, 'sine'); tone(660, 0.15, 0.2, 'sine', 0.25); },
  };

  function playSound(kind) {
    if (st.muted) return;
    st.sounds.push(kind);
    SOUNDS[kind]();
  }

  // the sound of a move by its SAN: a check (+ or #) before a capture (x), else a move
  function moveSound(san) {
    playSound(/[+#]/.test(san) ? 'check' : san.includes('x') ? 'capture' : 'move');
  }

  // lichess's low-time warning: once a game, when our running clock passes under its emergency time, an eighth of
  // the start clock within 10 to 60 s (lila ui/round/src/clock/clockCtrl.ts, emergMs)
  let lowWarned = null;

  function lowTimeSound(side, ms) {
    if (!st.full || !st.full.clock || side !== st.color || lowWarned === st.gameId) return;
    const limit = Math.min(60000, Math.max(10000, st.full.clock.initial * 0.125));
    if (ms < limit && ms > 0) {
      lowWarned = st.gameId;
      playSound('lowtime');
    }
  }

  function renderSoundButton() {
    $('sound').textContent = st.muted ? '\u266A off' : '\u266A on';  // a note: in every font, unlike a speaker
    $('sound').classList.toggle('muted', st.muted);
    $('sound').title = st.muted ? 'Sound off: click to turn it on' : 'Sound on: click to turn it off';
  }

  function bindSound() {
    $('sound').onclick = () => {
      st.muted = !st.muted;
      localStorage.setItem('lichessbot.sound', st.muted ? 'off' : 'on');
      renderSoundButton();
    };
    renderSoundButton();
  }
