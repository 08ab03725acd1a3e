# ruff: noqa: F821, B007, UP031  (run after SOCKET_CLIENT_PRELUDE, which defines its names)
last = None
for attempt in range(600):
    try:
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    except OSError as exc:
        last = exc
        time.sleep(0.1)
        continue
    sock.settimeout(None)
    sock.sendall(("%s %s\n" % (nonce, request)).encode())
    data = b""
    while not data.endswith(b"\n"):
        chunk = sock.recv(1 << 16)
        if not chunk:
            break
        data += chunk
    sock.close()
    try:
        reply = json.loads(data)
    except ValueError:
        last = "malformed reply"
        time.sleep(0.1)
        continue
    if reply.get("nonce") != nonce:
        finish({"ok": False, "error": "a reply without the request's nonce"})
    finish(reply)
sys.exit("RKWard's R channel is not reachable: %s" % last)
