"""TLS for the HTTP simulators (loki_sim, salesforce_sim): a throwaway self-signed
certificate, and a threading HTTP server that wraps each accepted socket when given one."""

import os
import ssl
import subprocess
import sys
from http.server import ThreadingHTTPServer


def make_tls(directory):
    """Writes DIR/cert.pem (its own CA, for 127.0.0.1 and localhost) and DIR/key.pem; returns
    the server context."""
    os.makedirs(directory, exist_ok=True)
    cert = os.path.join(directory, "cert.pem")
    key = os.path.join(directory, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                    "-out", cert, "-days", "2", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
                    "-addext", "basicConstraints=critical,CA:TRUE"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    return ctx


class TlsThreadingHTTPServer(ThreadingHTTPServer):
    """Plain HTTP until ssl_context is set; sim_name prefixes the handshake failure line."""

    daemon_threads = True
    ssl_context = None
    sim_name = "sim"

    def finish_request(self, request, client_address):
        # the TLS handshake runs in the connection's thread, never in the accept loop
        if self.ssl_context is None:
            self.RequestHandlerClass(request, client_address, self)
            return
        try:
            request = self.ssl_context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError) as exc:
            sys.stderr.write(f"{self.sim_name}: TLS handshake failed: {exc!r}\n")
            return
        try:
            self.RequestHandlerClass(request, client_address, self)
        finally:
            try:
                request.close()
            except OSError:
                pass
