# ruff: noqa: F821, B007, UP031  (run after SOCKET_CLIENT_PRELUDE, which defines its names)
sock = None
for attempt in range(300):
    try:
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        break
    except OSError:
        time.sleep(0.1)
if sock is None:
    sys.exit("Jmol's sync port is not reachable")
sock.settimeout(None)
reader = sock.makefile("rb")
def send(obj):
    sock.sendall(json.dumps(obj).encode() + b"\n")
send({"magic": "JmolApp", "role": "out"})
send({"type": "command", "command": request})
mark = "SCRIPT:" + nonce + " "
for line in reader:
    try:
        reply = json.loads(line).get("reply")
    except ValueError:
        continue
    if not isinstance(reply, str):
        continue
    if reply.startswith(mark):
        finish({"ok": True, "out": reply[len(mark):]})
    if reply.startswith("SCRIPT:" + nonce + "!"):
        finish({"ok": False, "error": reply[len(mark):]})
    if "ERROR" in reply[:40]:
        finish({"ok": False, "error": reply[:2000]})
sys.exit("Jmol closed the connection")
