"""Carry plaintext HTTP/2 with prior knowledge (h2c), as gRPC clients speak it in development.

mitmproxy reads a plaintext connection as HTTP/1 and refuses the HTTP/2 preface. When a
client's first bytes are that preface, this addon tells mitmproxy the connection speaks h2
(as ALPN would over TLS), and that the server connection made for it does too (offered in
ALPN when the agent speaks TLS), so
each gRPC call becomes an HTTP/2 flow the recorder sees like any other. Upstream mitmproxy
has an open change for h2c; this does the same with two public hooks.
"""

from __future__ import annotations

H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


class H2CPriorKnowledge:
    """A mitmproxy addon: `next_layer` marks h2c clients, `server_connect` their upstreams."""

    def next_layer(self, nextlayer) -> None:
        client = nextlayer.context.client
        data = nextlayer.data_client()
        # four bytes already tell the preface from an HTTP/1 request ("PRI " is reserved for it)
        if client.alpn is None and not client.tls and len(data) >= 4 and H2_PREFACE.startswith(data[:24]):
            client.alpn = b"h2"

    def server_connect(self, data) -> None:
        client, server = data.client, data.server
        if client.alpn != b"h2" or client.tls:
            return
        if server.tls:  # an agent over TLS: ask it for h2, as a TLS client would have
            if not server.alpn_offers:
                server.alpn_offers = (b"h2",)
        elif server.alpn is None:
            server.alpn = b"h2"
