#!/usr/bin/python3
# Copyright 2026 sf2loki contributors
# SPDX-License-Identifier: Apache-2.0
"""An HTTP CONNECT proxy for integration tests (Python standard library only).

usage: connect_proxy.py

Listens on 127.0.0.1 with an ephemeral port and prints "PORT <n>" as its first stdout line;
logs go to stderr. What a corporate forward proxy does for HTTPS and gRPC clients behind
HTTPS_PROXY: a "CONNECT host:port" request opens a TCP tunnel to that target and answers
"200 Connection established", then bytes are copied both ways until either side closes. The
proxy never sees inside the tunnel (TLS runs end to end between the client and the target).

GET  /control/stats   {"tunnels": {"host:port": n}, "forwarded": {"METHOD url": n}} on the
                      proxy port itself: a request that is neither CONNECT nor /control/ is
                      a plain-HTTP forward request; it is counted and refused with 502, so a
                      test sees a client that sent cleartext through the proxy.
"""

import json
import socket
import sys
import threading

LOCK = threading.Lock()
TUNNELS = {}
FORWARDED = {}


def read_head(conn):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(4096)
        if not chunk:
            return None, b""
        data += chunk
        if len(data) > 65536:
            return None, b""
    head, rest = data.split(b"\r\n\r\n", 1)
    return head.decode("latin-1"), rest


def reply(conn, status, reason, body=b"", ctype="text/plain"):
    conn.sendall((f"HTTP/1.1 {status} {reason}\r\nContent-Type: {ctype}\r\n"
                  f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode() + body)


def pipe(src, dst):
    try:
        while True:
            chunk = src.recv(65536)
            if not chunk:
                break
            dst.sendall(chunk)
    except OSError:
        pass
    finally:
        # half-close: the other direction may still be sending its last bytes
        try:
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def tunnel(conn, target, rest):
    host, _, port = target.rpartition(":")
    try:
        upstream = socket.create_connection((host.strip("[]"), int(port)), timeout=10)
    except (OSError, ValueError) as exc:
        sys.stderr.write(f"connect_proxy: cannot reach {target}: {exc}\n")
        reply(conn, 502, "Bad Gateway")
        return
    upstream.settimeout(None)
    with LOCK:
        TUNNELS[target] = TUNNELS.get(target, 0) + 1
    conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
    if rest:
        upstream.sendall(rest)
    back = threading.Thread(target=pipe, args=(upstream, conn), daemon=True)
    back.start()
    pipe(conn, upstream)
    back.join()
    upstream.close()


def handle(conn):
    try:
        head, rest = read_head(conn)
        if head is None:
            return
        method, target, _ = (head.split("\r\n", 1)[0].split(" ") + ["", ""])[:3]
        if method == "CONNECT":
            tunnel(conn, target, rest)
        elif method == "GET" and target == "/control/stats":
            with LOCK:
                body = json.dumps({"tunnels": TUNNELS, "forwarded": FORWARDED}).encode()
            reply(conn, 200, "OK", body, "application/json")
        else:
            with LOCK:
                key = f"{method} {target}"
                FORWARDED[key] = FORWARDED.get(key, 0) + 1
            reply(conn, 502, "Bad Gateway", b"this proxy only tunnels")
    except OSError as exc:
        sys.stderr.write(f"connect_proxy: {exc}\n")
    finally:
        conn.close()


def main():
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    print(f"PORT {server.getsockname()[1]}", flush=True)
    try:
        while True:
            conn, _ = server.accept()
            threading.Thread(target=handle, args=(conn,), daemon=True).start()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
