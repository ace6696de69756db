// The WebChat: the gateway's WebSocket (/ws), authenticated by the UI's session cookie that the browser
// sends with the upgrade (the token is never in this page nor in a URL). chat.send starts a turn; its
// "chat" events stream the reply (state delta, then final / error / aborted); Stop sends chat.abort.
(function () {
  "use strict";
  var log = document.getElementById("chat-log");
  var form = document.getElementById("chat-form");
  var text = document.getElementById("chat-text");
  var stop = document.getElementById("chat-stop");
  var send = document.getElementById("chat-send");
  var state = document.getElementById("chat-state");
  var sessionKey = log.dataset.sessionKey;
  var nextId = 1;
  var pending = {};
  var runId = null;
  var current = null;

  function add(role, body) {
    var li = document.createElement("li");
    li.className = "msg " + role;
    var who = document.createElement("span");
    who.className = "role";
    who.textContent = role;
    var div = document.createElement("div");
    div.className = "text";
    div.textContent = body; // text, never HTML
    li.appendChild(who);
    li.appendChild(div);
    log.appendChild(li);
    return div;
  }

  var scheme = location.protocol === "https:" ? "wss://" : "ws://";
  var ws = new WebSocket(scheme + location.host + "/ws");

  function call(method, params) {
    var id = String(nextId++);
    ws.send(JSON.stringify({ type: "req", id: id, method: method, params: params }));
    return new Promise(function (resolve) { pending[id] = resolve; });
  }

  function busy(on) {
    stop.disabled = !on;
    send.disabled = on;
  }

  ws.onopen = function () {
    state.textContent = "connected";
    call("chat.history", { sessionKey: sessionKey, limit: 50 }).then(function (res) {
      if (!res.ok) return;
      res.payload.messages.forEach(function (m) {
        if (typeof m.content === "string" && (m.role === "user" || m.role === "assistant")) add(m.role, m.content);
      });
    });
  };
  ws.onclose = function () { state.textContent = "disconnected: reload the page"; busy(false); };
  ws.onmessage = function (message) {
    var frame = JSON.parse(message.data);
    if (frame.type === "res") {
      var resolve = pending[frame.id];
      delete pending[frame.id];
      if (resolve) resolve(frame);
      return;
    }
    if (frame.type !== "event" || frame.event !== "chat") return;
    var p = frame.payload;
    if (runId !== null && p.runId !== runId) return;
    if (current === null) current = add("assistant", "");
    if (p.state === "delta") {
      current.textContent += p.text;
      state.textContent = "replying…";
    } else {
      if (p.state === "final") current.textContent = p.text;
      else current.textContent += (current.textContent ? "\n" : "") + "[" + p.state + (p.text ? ": " + p.text : "") + "]";
      current.parentNode.dataset.state = p.state;
      state.textContent = p.state === "final" ? "connected" : p.state;
      current = null;
      runId = null;
      busy(false);
    }
  };

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var body = text.value.trim();
    if (!body || ws.readyState !== WebSocket.OPEN) return;
    add("user", body);
    text.value = "";
    current = null;
    busy(true);
    call("chat.send", { sessionKey: sessionKey, text: body }).then(function (res) {
      if (res.ok) { runId = res.payload.runId; return; }
      add("error", res.error.message);
      busy(false);
    });
  });
  text.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); form.requestSubmit(); }
  });
  stop.addEventListener("click", function () {
    var asked = runId !== null ? { runId: runId } : { sessionKey: sessionKey };
    call("chat.abort", asked).then(function (res) {
      // the run ends (its "aborted" event) once the model's call returns
      if (res.ok && res.payload.aborted.length) state.textContent = "stopping…";
    });
  });
})();
