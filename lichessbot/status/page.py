"""The one HTML page (inline CSS and JS, nothing fetched from elsewhere): overview at ``/`` (with a box for
the operator's commands, ``POST /api/command``), a game at ``/games/<id>``. It loads ``/api/status`` (and
``/api/games/<id>``) once, then follows ``/api/events`` (server-sent events). Text from lichess (names) is set
with ``textContent``, never as HTML; the SVGs are the server's own.

Each answer is :func:`page_html` with a fresh nonce for its inline ``<style>`` and ``<script>`` (CSP Level 3,
"nonce-source") and the run's token in ``<meta name="lichessbot-token">``, which the script sends back with each
command (lichessbot.status.guard); :func:`page_csp` is the policy that goes with it.
"""

__all__ = ["PAGE", "page_csp", "page_html"]

_NONCE, _TOKEN = "{{nonce}}", "{{token}}"


def page_html(token: str, nonce: str) -> str:
    """The page with ``token`` (the run's command token) and ``nonce`` (this answer's CSP nonce) filled in; both
    must be URL-safe base64 (``secrets.token_urlsafe``), which needs no HTML escaping."""
    return PAGE.replace(_NONCE, nonce).replace(_TOKEN, token)


def page_csp(nonce: str) -> str:
    """The page's Content-Security-Policy (CSP Level 3): only its own nonce-marked script and style run, it talks
    only to this server (``connect-src 'self'``: the JSON, the event stream, the commands), nobody frames it. The
    board SVGs (python-chess's ``chess.svg``) set piece colours in ``style`` attributes: ``style-src-attr
    'unsafe-inline'`` lets those through (attributes run no script; ``img-src`` still limits where CSS could load
    from)."""
    return (f"default-src 'none'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; "
            "style-src-attr 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; "
            "base-uri 'none'; form-action 'self'")


PAGE = r"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>lichessbot status</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="lichessbot-token" content="{{token}}">
<style nonce="{{nonce}}">
body{font-family:system-ui,sans-serif;margin:0;background:#f6f6f4;color:#222}
header{background:#2b2b2b;color:#eee;padding:8px 16px;display:flex;gap:24px;align-items:baseline}
header a{color:#fff;text-decoration:none;font-weight:bold}
main{padding:12px 16px}
table{border-collapse:collapse;background:#fff}
th,td{padding:3px 8px;border-bottom:1px solid #ddd;text-align:left;font-size:14px}
th{background:#eee}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.cols{display:flex;gap:24px;flex-wrap:wrap}
.clock{font-size:26px;font-variant-numeric:tabular-nums;padding:2px 10px;background:#fff;border:1px solid #ccc;
 display:inline-block;min-width:90px;text-align:right}
.clock.run{background:#ffe9a8}
.player{font-size:16px;margin:4px 0}
#moves{max-width:420px;font-size:13px;line-height:1.5}
.muted{color:#777;font-size:13px}
.kv td:first-child{color:#666}
.wdl{display:flex;width:420px;height:14px;border:1px solid #999;margin-bottom:8px}
.wdl span{display:block;height:100%}.wdl .w{background:#fff}.wdl .d{background:#aaa}.wdl .l{background:#333}
</style></head>
<body>
<header><a href="/">lichessbot status</a><span id="svc" class="muted"></span></header>
<main>
<section id="overview">
 <div class="cols">
  <div><h3>Service</h3><table class="kv" id="service"></table>
   <h3>Commands</h3><form id="cmdform"><input id="cmd" size="34" placeholder="help" autocomplete="off">
   <button type="submit">run</button></form><pre id="cmdout" class="muted"></pre></div>
  <div><h3>Games</h3><table id="games"><thead><tr><th>game</th><th>white</th><th>black</th><th>speed</th>
   <th>plies</th><th>status</th><th>result</th><th>nps</th></tr></thead><tbody></tbody></table>
   <h3>Challenges <span class="muted" id="verdicts"></span></h3><table id="challenges"><thead><tr><th>challenger</th>
   <th>speed</th><th>answer</th><th>why</th></tr></thead><tbody></tbody></table></div>
 </div>
</section>
<section id="game" hidden>
 <h2 id="title"></h2><div class="muted" id="subtitle"></div>
 <div class="cols">
  <div>
   <div class="player"><span class="clock" id="clock-top"></span> <span id="name-top"></span></div>
   <div id="board"></div>
   <div class="player"><span class="clock" id="clock-bottom"></span> <span id="name-bottom"></span></div>
  </div>
  <div>
   <h3>Search <span class="muted" id="search-head"></span></h3>
   <div class="wdl" id="wdl"><span class="w"></span><span class="d"></span><span class="l"></span></div>
   <table id="search"><thead><tr><th>move</th><th>visits</th><th>policy %</th><th>Q</th><th>draw %</th>
    <th>PV</th></tr></thead><tbody></tbody></table>
   <h3>Evaluation <span class="muted">(white's view)</span></h3><div id="graph"></div>
   <h3>Moves</h3><div id="moves"></div>
   <p><a id="summary-link" href="#">post-game SVG</a> · <a id="json-link" href="#">JSON</a></p>
  </div>
 </div>
</section>
</main>
<script nonce="{{nonce}}">
"use strict";
const token = document.querySelector('meta[name="lichessbot-token"]').content;
const gameId = (location.pathname.match(/^\/games\/([^\/]+)/) || [])[1] || null;
let game = null, skew = 0;
function el(tag, text, cls){const e=document.createElement(tag); if(text!==undefined) e.textContent=text;
 if(cls) e.className=cls; return e;}
function fmtClock(ms){ if(ms===null||ms===undefined) return "–"; ms=Math.max(0,ms); const s=Math.floor(ms/1000);
 const h=Math.floor(s/3600), m=Math.floor(s/60)%60, r=s%60; const pad=x=>String(x).padStart(2,"0");
 return (h?h+":"+pad(m):m)+":"+pad(r)+(s<10?"."+Math.floor(ms%1000/100):""); }
function fmt(v){ if(typeof v==="number") return Number.isInteger(v)? String(v) : v.toFixed(2);
 if(v && typeof v==="object" && !Object.keys(v).length) return "none";
 if(v && typeof v==="object") return Object.entries(v).map(([k,x])=>k+" "+fmt(x)).join(" · ");
 return String(v); }
function renderStatus(st){
 const svc=st.service||{}; document.getElementById("svc").textContent =
  (svc.username||"")+" · "+(svc.engine||"")+" · "+(st.games||[]).filter(g=>!g.over).length+" playing";
 const t=document.getElementById("service"); t.replaceChildren();
 for(const [k,v] of Object.entries(svc)){ const tr=el("tr"); tr.append(el("td",k),
  el("td", fmt(v))); t.append(tr); }
 const tb=document.querySelector("#games tbody"); tb.replaceChildren();
 for(const g of (st.games||[]).slice().reverse()){ const tr=el("tr"); const a=el("a", g.id); a.href="/games/"+g.id;
  const td=el("td"); td.append(a);
  tr.append(td, el("td", g.white+(g.white_rating?" ("+g.white_rating+")":"")),
   el("td", g.black+(g.black_rating?" ("+g.black_rating+")":"")), el("td", g.speed), el("td", g.plies,"num"),
   el("td", g.status), el("td", g.result), el("td", g.nps===null?"":g.nps,"num")); tb.append(tr); }
 const ch=st.challenges||{recent:[]}; document.getElementById("verdicts").textContent =
  (ch.accepted||0)+" accepted · "+(ch.declined||0)+" declined";
 const cb=document.querySelector("#challenges tbody"); cb.replaceChildren();
 for(const c of ch.recent.slice().reverse()){ const tr=el("tr"); tr.append(el("td", c.challenger), el("td", c.speed||""),
  el("td", c.accepted?"accepted":"declined: "+(c.reason||"")), el("td", c.why||"")); cb.append(tr); }
}
function clockMs(side){ const c=game&&game.clock; if(!c) return null; let ms=c[side+"time_ms"];
 if(c.running && game.turn[0]===side) ms -= (Date.now()/1000 - skew - c.at)*1000; return ms; }
function tickClocks(){ if(!game) return; const bottom=game.our_color==="black"?"b":"w", top=bottom==="w"?"b":"w";
 for(const [id,s] of [["clock-top",top],["clock-bottom",bottom]]){ const e=document.getElementById(id);
  e.textContent=fmtClock(clockMs(s)); const side=s==="w"?"white":"black";
  e.classList.toggle("run", !!(game.clock&&game.clock.running&&game.turn===side)); } }
function renderGame(g){
 game=g; skew = Date.now()/1000 - g.now;
 document.getElementById("overview").hidden=true; document.getElementById("game").hidden=false;
 document.getElementById("title").textContent = g.white+" vs "+g.black;
 document.getElementById("subtitle").textContent = [g.speed, g.rated?"rated":"casual", g.variant, g.status,
  g.result, g.plies+" plies"].join(" · ");
 const bottom=g.our_color==="black"?"black":"white", top=bottom==="white"?"black":"white";
 const nm=s=>g[s]+(g[s+"_rating"]?" ("+g[s+"_rating"]+")":"");
 document.getElementById("name-top").textContent=nm(top);
 document.getElementById("name-bottom").textContent=nm(bottom);
 document.getElementById("board").innerHTML = g.board_svg;
 document.getElementById("graph").innerHTML = g.eval_svg;
 const notes={}; (g.evals||[]).forEach(e=>{ if(e.note) notes[e.ply]=e.note; });
 const mv=[]; g.san.forEach((s,i)=>{ if(i%2===0) mv.push((i/2+1)+"."); mv.push(notes[i]? s+" {"+notes[i]+"}" : s); });
 document.getElementById("moves").textContent = mv.join(" ");
 const tb=document.querySelector("#search tbody"); tb.replaceChildren(); const L=g.live;
 document.getElementById("search-head").textContent = L ? ((L.pondering?"pondering · ":L.done?"done · ":"thinking · ")+
  L.nodes+" nodes ("+L.reused+" reused) · "+L.nps+" nps · depth "+L.depth+"/"+L.seldepth+" · "+L.elapsed.toFixed(1)+" s · "+
  (L.mate!==null? "mate "+L.mate : (L.cp!==null? (L.cp/100).toFixed(2):"")) ) : "no search yet";
 const wdl = L ? L.wdl : [0,1,0]; const bar=document.getElementById("wdl").children;
 for(let i=0;i<3;i++){ bar[i].style.width=(100*wdl[i]).toFixed(1)+"%"; }
 document.getElementById("wdl").title = "win/draw/loss of the searching side: "+wdl.map(x=>(100*x).toFixed(0)+"%").join(" / ");
 if(L) for(const r of L.lines){ const tr=el("tr"); tr.append(el("td", r.san), el("td", r.visits,"num"),
  el("td",(100*r.policy).toFixed(1),"num"), el("td", r.q.toFixed(3),"num"), el("td",(100*r.draw).toFixed(1),"num"),
  el("td", (r.pv_san.length? r.pv_san : r.pv).join(" "))); tb.append(tr); }
 document.getElementById("summary-link").href="/api/games/"+g.id+"/summary.svg";
 document.getElementById("json-link").href="/api/games/"+g.id;
 tickClocks();
}
async function load(){
 const st = await (await fetch("/api/status")).json(); renderStatus(st);
 if(gameId){ const r = await fetch("/api/games/"+encodeURIComponent(gameId)); if(r.ok) renderGame(await r.json());
  else document.getElementById("svc").textContent="game "+gameId+" not known"; }
 const es = new EventSource("/api/events"+(gameId?"?game="+encodeURIComponent(gameId):""));
 es.addEventListener("status", e=>renderStatus(JSON.parse(e.data)));
 es.addEventListener("game", e=>renderGame(JSON.parse(e.data)));
}
document.getElementById("cmdform").addEventListener("submit", async ev=>{ ev.preventDefault();
 const input=document.getElementById("cmd"), out=document.getElementById("cmdout"), line=input.value.trim();
 if(!line) return;
 const r=await fetch("/api/command",{method:"POST",headers:{"Content-Type":"application/json",
  "X-Lichessbot-Token":token},
  body:JSON.stringify({command:line})});
 const body=await r.json(); out.textContent="> "+line+"\n"+(body.answer||body.error||""); input.value=""; });
setInterval(tickClocks, 100);
load();
</script>
</body></html>
"""
