#!/usr/bin/env python3
"""Holds many idle keep-alive connections to a syncd on 127.0.0.1 (scripts/bench-http.sh).

Opens N connections, sends `GET PATH` on each and reads the answer, keeps them all open and idle
for HOLD seconds, then sends the request again on every one and checks each answers 200 on the
same connection. Prints one summary line; exits 1 if any connection failed.

Usage: bench-idle-connections.py PORT [--connections N] [--hold SECONDS] [--path PATH]
"""
import argparse
import resource
import socket
import sys
import time


def request(path):
    return f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n".encode()


def read_response(sock):
    """Reads one response (head + Content-Length body); returns its status code."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            raise ConnectionError("closed before the response head")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = sock.recv(4096)
        if not chunk:
            raise ConnectionError("closed inside the response body")
        body += chunk
    return status


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("--connections", type=int, default=1000)
    parser.add_argument("--hold", type=float, default=30)
    parser.add_argument("--path", default="/health")
    args = parser.parse_args()

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = args.connections + 64
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(wanted, hard), hard))

    sockets, errors = [], []
    started = time.monotonic()
    for index in range(args.connections):
        try:
            sock = socket.create_connection(("127.0.0.1", args.port), timeout=10)
            sock.sendall(request(args.path))
            status = read_response(sock)
            if status != 200:
                errors.append(f"connection {index}: first answer {status}")
            sockets.append((index, sock))
        except OSError as error:
            errors.append(f"connection {index}: {error}")
    opened = time.monotonic() - started
    print(f"idle: {len(sockets)} connections open in {opened:.2f} s, holding {args.hold:.0f} s", flush=True)
    time.sleep(args.hold)

    answered = 0
    for index, sock in sockets:
        try:
            sock.sendall(request(args.path))
            status = read_response(sock)
            if status == 200:
                answered += 1
            else:
                errors.append(f"connection {index}: second answer {status}")
        except OSError as error:
            errors.append(f"connection {index}: after idling: {error}")
        finally:
            sock.close()
    print(f"idle: {answered} of {args.connections} connections answered again after {args.hold:.0f} s idle; errors: {len(errors)}")
    for error in errors[:10]:
        print(f"  {error}")
    return 0 if not errors and answered == args.connections else 1


if __name__ == "__main__":
    sys.exit(main())
