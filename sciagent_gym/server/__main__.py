"""``python -m sciagent_gym.server``: serve one X display over HTTP (see sciagent_gym.server)."""

from __future__ import annotations

import argparse
import ipaddress
import os
import signal
import sys
from pathlib import Path


def read_token(args: argparse.Namespace) -> str:
    """The secret from --token-file, the kernel command line key, or $SCIAGENT_TOKEN."""
    if args.token_file:
        return Path(args.token_file).read_text().strip()
    if args.token_cmdline:
        for item in Path("/proc/cmdline").read_text().split():
            key, _, value = item.partition("=")
            if key == args.token_cmdline:
                return value
        raise SystemExit(f"no {args.token_cmdline}=... on the kernel command line")
    token = os.environ.get("SCIAGENT_TOKEN", "")
    if not token:
        raise SystemExit("give a token: --token-file, --token-cmdline KEY or $SCIAGENT_TOKEN")
    return token


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sciagent_gym.server",
                                     description="Serve one X display to a sciagent-gym env.")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1; in a VM guest 0.0.0.0, "
                             "reached only through the host's loopback port forward)")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--display", default=os.environ.get("DISPLAY", ""))
    parser.add_argument("--home", default=os.environ.get("HOME", ""),
                        help="the programs' home directory (a directory the server owns)")
    parser.add_argument("--work", help="task working directory (default HOME/work)")
    parser.add_argument("--tool", help="tool whose state channel /tool/* serves (e.g. imagej)")
    secret = parser.add_mutually_exclusive_group()
    secret.add_argument("--token-file")
    secret.add_argument("--token-cmdline", metavar="KEY",
                        help="read the token from KEY=... on the kernel command line")
    args = parser.parse_args(argv)
    if not args.display and sys.platform != "win32":
        parser.error("no X display: pass --display or set DISPLAY")
    if not args.home:
        parser.error("no home directory: pass --home")
    token = read_token(args)
    try:
        loopback = ipaddress.ip_address(args.host).is_loopback
    except ValueError:
        loopback = args.host == "localhost"
    if not loopback:
        print(f"warning: listening on {args.host}; anyone who reaches it and has the token "
              "controls this display", file=sys.stderr)

    from sciagent_gym.server.app import ControlServer
    from sciagent_gym.server.backend import make_machine

    adapter = None
    if args.tool:
        from sciagent_gym.tools import load_adapter

        adapter = load_adapter(args.tool, getters=False)
    machine = make_machine(args.display, args.home, args.work)
    server = ControlServer((args.host, args.port), machine, token, adapter)
    def stop(*_: object) -> None:
        raise KeyboardInterrupt  # leaves serve_forever through the finally below

    signal.signal(signal.SIGTERM, stop)
    print(f"serving display {machine.display_name} ({machine.width}x{machine.height}) on "
          f"{args.host}:{server.server_address[1]}", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        machine.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
