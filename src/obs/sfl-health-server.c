/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflHealth"

#include "config.h"

#include "sfl-health-server.h"

#include <libsoup/soup.h>
#include <string.h>

#include "sfl-error.h"

/*
 * A client silent (or trickling) for this long is dropped, like the original's 5 s read
 * timeout: a probe that connects and never sends must not hold a connection forever.
 */
#define SFL_HEALTH_IO_TIMEOUT_S 5

struct _SflHealthServer {
	SoupServer *server;
	SflHealthCallbacks callbacks;
	gpointer user_data;
	guint port;
};

static void
sfl_health_reply(SoupServerMessage *msg, guint status, const gchar *content_type, const gchar *body)
{
	soup_server_message_set_status(msg, status, NULL);
	/* one request per connection, as the original: no idle keep-alive connection can linger
	 * (libsoup does not close one whose socket timed out between requests) */
	soup_message_headers_replace(soup_server_message_get_response_headers(msg), "Connection",
				     "close");
	soup_server_message_set_response(msg, content_type, SOUP_MEMORY_COPY, body, strlen(body));
}

/* only GET and HEAD; FALSE when the request was answered already */
static gboolean
sfl_health_method_ok(SoupServerMessage *msg)
{
	const gchar *method = soup_server_message_get_method(msg);

	if (g_str_equal(method, "GET") || g_str_equal(method, "HEAD"))
		return TRUE;
	soup_message_headers_replace(soup_server_message_get_response_headers(msg), "Allow",
				     "GET, HEAD");
	sfl_health_reply(msg, SOUP_STATUS_METHOD_NOT_ALLOWED, "text/plain; charset=utf-8",
			 "method not allowed\n");
	return FALSE;
}

/* before the request line is read: every later read or write on the socket is bounded */
static void
sfl_health_request_started_cb(SoupServer *server, SoupServerMessage *msg, gpointer user_data)
{
	GSocket *socket = soup_server_message_get_socket(msg);

	if (socket != NULL)
		g_socket_set_timeout(socket, SFL_HEALTH_IO_TIMEOUT_S);
}

struct _SflHealthReply {
	SoupServerMessage *msg; /* owned */
};

gboolean
sfl_health_peer_is_local(GSocketAddress *peer)
{
	GInetAddress *addr = NULL;
	g_autofree gchar *text = NULL;

	if (!G_IS_INET_SOCKET_ADDRESS(peer))
		return FALSE;
	addr = g_inet_socket_address_get_address(G_INET_SOCKET_ADDRESS(peer));
	if (g_inet_address_get_is_loopback(addr))
		return TRUE;
	/* a dual-stack listener sees 127.0.0.1 as ::ffff:127.0.0.1 */
	text = g_inet_address_to_string(addr);
	return g_str_has_prefix(text, "::ffff:127.");
}

void
sfl_health_reply_finish(SflHealthReply *reply, guint status, const gchar *body)
{
	g_return_if_fail(reply != NULL);
	sfl_health_reply(reply->msg, status, "application/json", body);
	soup_server_message_unpause(reply->msg);
	g_object_unref(reply->msg);
	g_free(reply);
}

/* POST /-/reload */
static void
sfl_health_control(SflHealthServer *self, SoupServerMessage *msg)
{
	SflHealthReply *reply = NULL;

	if (!g_str_equal(soup_server_message_get_method(msg), "POST")) {
		soup_message_headers_replace(soup_server_message_get_response_headers(msg), "Allow",
					     "POST");
		sfl_health_reply(msg, SOUP_STATUS_METHOD_NOT_ALLOWED, "text/plain; charset=utf-8",
				 "method not allowed\n");
		return;
	}
	/* the health port may face the network (a pod IP); a reload is for the host only */
	if (!sfl_health_peer_is_local(soup_server_message_get_remote_address(msg))) {
		sfl_health_reply(msg, SOUP_STATUS_FORBIDDEN, "text/plain; charset=utf-8",
				 "forbidden: the control path answers loopback peers only\n");
		return;
	}
	reply = g_new0(SflHealthReply, 1);
	reply->msg = g_object_ref(msg);
	soup_server_message_pause(msg);
	self->callbacks.reload(self->user_data, reply);
}

static void
sfl_health_handler(SoupServer *server, SoupServerMessage *msg, const char *path, GHashTable *query,
		   gpointer user_data)
{
	SflHealthServer *self = user_data;

	if (g_str_equal(path, "/-/reload") && self->callbacks.reload != NULL) {
		sfl_health_control(self, msg);
		return;
	}
	if (!sfl_health_method_ok(msg))
		return;
	if (g_str_equal(path, "/healthz")) {
		sfl_health_reply(msg, SOUP_STATUS_OK, "text/plain; charset=utf-8", "ok\n");
	} else if (g_str_equal(path, "/readyz")) {
		gchar *reason = NULL;
		gboolean ready = self->callbacks.ready == NULL ||
				 self->callbacks.ready(self->user_data, &reason);
		g_autofree gchar *body = g_strdup_printf(
			"%s%s%s%s\n", ready ? "ready" : (reason != NULL ? reason : "not ready"),
			ready && reason != NULL ? " (" : "", ready && reason != NULL ? reason : "",
			ready && reason != NULL ? ")" : "");
		g_free(reason);
		sfl_health_reply(msg, ready ? SOUP_STATUS_OK : SOUP_STATUS_SERVICE_UNAVAILABLE,
				 "text/plain; charset=utf-8", body);
	} else if (g_str_equal(path, "/metrics") && self->callbacks.metrics != NULL) {
		g_autofree gchar *body = self->callbacks.metrics(self->user_data);
		sfl_health_reply(msg, SOUP_STATUS_OK, "text/plain; version=0.0.4; charset=utf-8",
				 body);
	} else if (g_str_equal(path, "/statusz") && self->callbacks.status != NULL) {
		g_autofree gchar *body = self->callbacks.status(self->user_data);
		sfl_health_reply(msg, SOUP_STATUS_OK, "application/json", body);
	} else {
		sfl_health_reply(msg, SOUP_STATUS_NOT_FOUND, "text/plain; charset=utf-8",
				 "not found\n");
	}
}

/* "host:port", "[v6]:port" or ":port" (every interface) */
static gboolean
sfl_health_parse_addr(const gchar *addr, gchar **host, guint *port, GError **error)
{
	const gchar *colon = strrchr(addr, ':');
	guint64 value = 0;

	if (colon == NULL || !g_ascii_string_to_unsigned(colon + 1, 10, 0, 65535, &value, NULL)) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
			    "service.health_addr: expected host:port, got '%s'", addr);
		return FALSE;
	}
	*port = (guint)value;
	*host = g_strndup(addr, colon - addr);
	if ((*host)[0] == '[' && g_str_has_suffix(*host, "]")) {
		gchar *inner = g_strndup(*host + 1, strlen(*host) - 2);
		g_free(*host);
		*host = inner;
	}
	return TRUE;
}

/**
 * sfl_health_server_new:
 * @addr: service.health_addr
 * @callbacks: what /readyz, /metrics and /statusz report
 * @user_data: for the callbacks
 * @error: return location for an error
 *
 * Returns: (transfer full) (nullable): a listening server, or %NULL with @error set (the
 *   address is named, e.g. when the port is taken)
 */
SflHealthServer *
sfl_health_server_new(const gchar *addr, const SflHealthCallbacks *callbacks, gpointer user_data,
		      GError **error)
{
	g_autoptr(SflHealthServer) self = g_new0(SflHealthServer, 1);
	g_autofree gchar *host = NULL;
	g_autoptr(GError) local = NULL;
	GSList *uris = NULL;
	guint port = 0;
	gboolean ok = FALSE;

	g_return_val_if_fail(addr != NULL && callbacks != NULL, NULL);
	if (!sfl_health_parse_addr(addr, &host, &port, error))
		return NULL;
	self->callbacks = *callbacks;
	self->user_data = user_data;
	self->server = soup_server_new("server-header", "sf2loki/" PACKAGE_VERSION, NULL);
	soup_server_add_handler(self->server, NULL, sfl_health_handler, self, NULL);
	g_signal_connect(self->server, "request-started", G_CALLBACK(sfl_health_request_started_cb),
			 NULL);
	if (host[0] == '\0') {
		ok = soup_server_listen_all(self->server, port, 0, &local);
	} else {
		g_autoptr(GSocketAddress) sa = g_inet_socket_address_new_from_string(host, port);
		if (sa == NULL) {
			g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
				    "service.health_addr: '%s' is not an IP address", host);
			return NULL;
		}
		ok = soup_server_listen(self->server, sa, 0, &local);
	}
	if (!ok) {
		/* a runtime failure (exit 1): the port may be free again when restarted */
		g_set_error(error, SFL_ERROR, SFL_ERROR_TRANSIENT,
			    "cannot listen on service.health_addr %s: %s", addr, local->message);
		return NULL;
	}
	uris = soup_server_get_uris(self->server);
	if (uris != NULL)
		self->port = (guint)g_uri_get_port(uris->data);
	g_slist_free_full(uris, (GDestroyNotify)g_uri_unref);
	return g_steal_pointer(&self);
}

void
sfl_health_server_free(SflHealthServer *self)
{
	if (self == NULL)
		return;
	if (self->server != NULL) {
		soup_server_disconnect(self->server);
		g_object_unref(self->server);
	}
	g_free(self);
}

guint
sfl_health_server_get_port(SflHealthServer *self)
{
	return self->port;
}
