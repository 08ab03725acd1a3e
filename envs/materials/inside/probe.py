# ruff: noqa: E401, I001, F821  (the adapter substitutes the port number)
import socket, sys, time
deadline = time.monotonic() + float(sys.argv[1])
while True:
    try:
        socket.create_connection(("127.0.0.1", PORT), timeout=1).close()
        sys.exit(0)
    except OSError:
        if time.monotonic() > deadline:
            sys.exit(3)
        time.sleep(0.05)
