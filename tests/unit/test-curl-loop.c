/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "TestCurlLoop"

#include <gio/gio.h>
#include <string.h>

#include "sfl-clock.h"
#include "sfl-curl-loop.h"
#include "sfl-error.h"
#include "sfl-http.h"
#include "sfl-gsource.h"
#include "sfl-socket-source.h"

/*
 * The socket source under the curl loop, and the loop moving large bodies both ways. Built for
 * Linux and for Windows (make win-test runs it under wine): Windows socket events are
 * edge-like, and a readiness signalled once and not consumed must still be reported again, or
 * a transfer stalls until curl's timeout (the first Windows build's 60-second push stalls).
 */

#define DEADLINE_S 60

static gboolean
set_flag_cb(gpointer user_data)
{
	*(gboolean *)user_data = TRUE;
	return G_SOURCE_REMOVE;
}

/* iterates the default context until *@flag or @seconds; returns *@flag */
static gboolean
iterate_until(const gboolean *flag, guint seconds)
{
	gboolean expired = FALSE;
	GSource *deadline = g_timeout_source_new_seconds(seconds);

	g_source_set_callback(deadline, set_flag_cb, &expired, NULL);
	g_source_attach(deadline, NULL);
	while (!*flag && !expired)
		g_main_context_iteration(NULL, TRUE);
	g_source_destroy(deadline);
	g_source_unref(deadline);
	return *flag;
}

/* a TCP socket listening on a free loopback port; its address in *@bound */
static GSocket *
loopback_listener(GSocketAddress **bound)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback(G_SOCKET_FAMILY_IPV4);
	g_autoptr(GSocketAddress) any = g_inet_socket_address_new(loopback, 0);
	GSocket *listener = g_socket_new(G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM,
					 G_SOCKET_PROTOCOL_TCP, &error);

	g_assert_no_error(error);
	g_assert_true(g_socket_bind(listener, any, TRUE, &error));
	g_assert_true(g_socket_listen(listener, &error));
	*bound = g_socket_get_local_address(listener, &error);
	g_assert_no_error(error);
	return listener;
}

/* http://127.0.0.1:PORT@path for a listener's address */
static gchar *
loopback_url(GSocketAddress *bound, const gchar *path)
{
	return g_strdup_printf("http://127.0.0.1:%u%s",
			       g_inet_socket_address_get_port(G_INET_SOCKET_ADDRESS(bound)), path);
}

/* a connected loopback TCP pair */
static void
socket_pair(GSocket **out_a, GSocket **out_b)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GSocketAddress) bound = NULL;
	g_autoptr(GSocket) listener = loopback_listener(&bound);
	GSocket *a;
	GSocket *b;

	a = g_socket_new(G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, &error);
	g_assert_no_error(error);
	g_assert_true(g_socket_connect(a, bound, NULL, &error));
	b = g_socket_accept(listener, NULL, &error);
	g_assert_no_error(error);
	g_socket_set_blocking(a, FALSE);
	g_socket_set_blocking(b, FALSE);
	*out_a = a;
	*out_b = b;
}

typedef struct {
	guint calls;
	GIOCondition seen;
	gboolean enough;
	guint want_calls;
	GSocket *drain; /* read everything when set */
} Seen;

static gboolean
record_cb(GIOCondition ready, gpointer user_data)
{
	Seen *seen = user_data;

	seen->calls++;
	seen->seen |= ready;
	if (seen->drain != NULL) {
		gchar buf[256];

		while (g_socket_receive(seen->drain, buf, sizeof(buf), NULL, NULL) > 0)
			;
	}
	if (seen->calls >= seen->want_calls)
		seen->enough = TRUE;
	return G_SOURCE_CONTINUE;
}

/* a socket source on @sock for @condition reporting to @seen, not attached yet */
static GSource *
watch_new(GSocket *sock, GIOCondition condition, Seen *seen)
{
	g_autoptr(GError) error = NULL;
	GSource *source = sfl_socket_source_new(g_socket_get_fd(sock), condition, &error);

	g_assert_no_error(error);
	g_source_set_callback(source, (GSourceFunc)(void (*)(void))record_cb, seen, NULL);
	return source;
}

static void
watch_free(GSource *source)
{
	g_source_destroy(source);
	g_source_unref(source);
}

/* data signalled once and left unread is reported again, however edge-like the OS is */
static void
test_unread_input_reported_again(void)
{
	g_autoptr(GSocket) a = NULL;
	g_autoptr(GSocket) b = NULL;
	g_autoptr(GError) error = NULL;
	Seen seen = { .want_calls = 5 };
	GSource *source;

	socket_pair(&a, &b);
	g_assert_cmpint(g_socket_send(b, "hello", 5, NULL, &error), ==, 5);
	source = watch_new(a, G_IO_IN, &seen);
	g_source_attach(source, NULL);
	g_assert_true(iterate_until(&seen.enough, 10));
	g_assert_true(seen.seen & G_IO_IN);
	watch_free(source);
}

/* a writable socket stays reported while output is wanted, not only after a blocked send */
static void
test_writable_reported_while_wanted(void)
{
	g_autoptr(GSocket) a = NULL;
	g_autoptr(GSocket) b = NULL;
	Seen seen = { .want_calls = 5 };
	GSource *source;

	socket_pair(&a, &b);
	source = watch_new(a, G_IO_OUT, &seen);
	g_source_attach(source, NULL);
	g_assert_true(iterate_until(&seen.enough, 10));
	g_assert_cmpint(seen.seen & G_IO_OUT, ==, G_IO_OUT);
	watch_free(source);
}

/* once consumed, input is not reported until more arrives; changing the condition sticks */
static void
test_quiet_until_new_input(void)
{
	g_autoptr(GSocket) a = NULL;
	g_autoptr(GSocket) b = NULL;
	g_autoptr(GError) error = NULL;
	Seen seen = { .want_calls = 1 };
	gboolean idle = FALSE;
	GSource *source;
	GSource *pause;

	socket_pair(&a, &b);
	source = watch_new(a, G_IO_OUT, &seen);
	sfl_socket_source_set_condition(source, G_IO_IN);
	seen.drain = a;
	g_source_attach(source, NULL);

	/* nothing to read and output no longer wanted: no call within a short wait */
	pause = g_timeout_source_new(300);
	g_source_set_callback(pause, set_flag_cb, &idle, NULL);
	g_source_attach(pause, NULL);
	g_assert_true(iterate_until(&idle, 10));
	g_source_unref(pause);
	g_assert_cmpuint(seen.calls, ==, 0);

	g_assert_cmpint(g_socket_send(b, "x", 1, NULL, &error), ==, 1);
	g_assert_true(iterate_until(&seen.enough, 10));
	g_assert_cmpuint(seen.calls, ==, 1);
	g_assert_cmpint(seen.seen, ==, G_IO_IN);
	watch_free(source);
}

/* --- the curl loop against a blocking HTTP server thread ------------------------------------ */

#define UPLOAD_BYTES   (8u * 1024 * 1024)
#define DOWNLOAD_BYTES (32u * 1024 * 1024)

typedef struct {
	GSocket *listener;
	guint64 received;   /* request body bytes the server read */
	guint32 upload_sum; /* a checksum of them */
	gboolean failed;
} Server;

static guint32
checksum(guint32 sum, const guint8 *data, gsize len)
{
	for (gsize i = 0; i < len; i++)
		sum = sum * 31u + data[i];
	return sum;
}

static guint8
pattern_byte(guint64 offset)
{
	return (guint8)((offset * 7u + offset / 4099u) & 0xff);
}

static gpointer
server_thread(gpointer user_data)
{
	Server *server = user_data;
	g_autoptr(GError) error = NULL;
	g_autoptr(GSocket) conn = g_socket_accept(server->listener, NULL, &error);
	g_autoptr(GString) head = g_string_new(NULL);
	g_autofree gchar *reply_head = NULL;
	g_autofree guint8 *chunk = g_malloc(65536);
	const gchar *cl;
	guint64 content_length;
	guint64 sent = 0;
	gchar *end;

	if (conn == NULL) {
		server->failed = TRUE;
		return NULL;
	}
	g_socket_set_blocking(conn, TRUE);
	/* the head, then exactly Content-Length bytes of body */
	while ((end = strstr(head->str, "\r\n\r\n")) == NULL) {
		gssize n = g_socket_receive(conn, (gchar *)chunk, 1, NULL, &error);

		if (n <= 0) {
			server->failed = TRUE;
			return NULL;
		}
		g_string_append_len(head, (gchar *)chunk, n);
	}
	cl = strstr(head->str, "Content-Length: ");
	if (cl == NULL) {
		server->failed = TRUE;
		return NULL;
	}
	content_length = g_ascii_strtoull(cl + strlen("Content-Length: "), NULL, 10);
	while (server->received < content_length) {
		gsize want = (gsize)MIN(65536, content_length - server->received);
		gssize n = g_socket_receive(conn, (gchar *)chunk, want, NULL, &error);

		if (n <= 0) {
			server->failed = TRUE;
			return NULL;
		}
		server->upload_sum = checksum(server->upload_sum, chunk, (gsize)n);
		server->received += (guint64)n;
	}
	reply_head = g_strdup_printf("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
				     "Content-Length: %u\r\nConnection: close\r\n\r\n",
				     DOWNLOAD_BYTES);
	if (g_socket_send(conn, reply_head, strlen(reply_head), NULL, &error) < 0) {
		server->failed = TRUE;
		return NULL;
	}
	while (sent < DOWNLOAD_BYTES) {
		gsize len = (gsize)MIN(65536, DOWNLOAD_BYTES - sent);
		gsize off = 0;

		for (gsize i = 0; i < len; i++)
			chunk[i] = pattern_byte(sent + i);
		while (off < len) {
			gssize n =
				g_socket_send(conn, (gchar *)chunk + off, len - off, NULL, &error);

			if (n <= 0) {
				server->failed = TRUE;
				return NULL;
			}
			off += (gsize)n;
		}
		sent += len;
	}
	g_socket_shutdown(conn, FALSE, TRUE, NULL);
	return NULL;
}

typedef struct {
	guint64 received;
	gboolean pattern_ok;
	gboolean done;
	CURLcode code;
} Client;

static size_t
client_write_cb(char *data, size_t size, size_t nmemb, void *userp)
{
	Client *client = userp;
	size_t len = size * nmemb;

	for (size_t i = 0; i < len && client->pattern_ok; i++) {
		if ((guint8)data[i] != pattern_byte(client->received + i))
			client->pattern_ok = FALSE;
	}
	client->received += len;
	return len;
}

static void
client_done_cb(CURL *easy, CURLcode code, gpointer user_data)
{
	Client *client = user_data;

	(void)easy;
	client->code = code;
	client->done = TRUE;
}

/* a large upload and a larger download on one connection, without a stall */
static void
test_loop_moves_large_bodies(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GSocketAddress) bound = NULL;
	g_autoptr(SflCurlLoop) loop = sfl_curl_loop_new();
	g_autofree guint8 *body = g_malloc(UPLOAD_BYTES);
	g_autofree gchar *url = NULL;
	Server server = { 0 };
	Client client = { .pattern_ok = TRUE };
	GThread *thread;
	CURL *easy;
	guint32 sum;
	gint64 started;

	server.listener = loopback_listener(&bound);
	url = loopback_url(bound, "/upload");
	thread = g_thread_new("server", server_thread, &server);

	for (gsize i = 0; i < UPLOAD_BYTES; i++)
		body[i] = (guint8)(i * 13u + (i >> 12));
	sum = checksum(0, body, UPLOAD_BYTES);

	easy = curl_easy_init();
	curl_easy_setopt(easy, CURLOPT_URL, url);
	curl_easy_setopt(easy, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(easy, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)UPLOAD_BYTES);
	curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, client_write_cb);
	curl_easy_setopt(easy, CURLOPT_WRITEDATA, &client);
	/* a stall shows as this timeout, well inside the test's deadline */
	curl_easy_setopt(easy, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(easy, CURLOPT_LOW_SPEED_TIME, 20L);
	started = g_get_monotonic_time();
	g_assert_true(sfl_curl_loop_add(loop, easy, client_done_cb, &client, &error));
	g_assert_no_error(error);
	g_assert_true(iterate_until(&client.done, DEADLINE_S));
	g_test_message("%u bytes up, %u down in %.2f s", UPLOAD_BYTES, DOWNLOAD_BYTES,
		       (double)(g_get_monotonic_time() - started) / G_USEC_PER_SEC);
	g_thread_join(thread);

	g_assert_cmpint(client.code, ==, CURLE_OK);
	g_assert_false(server.failed);
	g_assert_cmpuint(server.received, ==, UPLOAD_BYTES);
	g_assert_cmpuint(server.upload_sum, ==, sum);
	g_assert_cmpuint(client.received, ==, DOWNLOAD_BYTES);
	g_assert_true(client.pattern_ok);
	g_assert_cmpuint(sfl_curl_loop_get_n_transfers(loop), ==, 0);
	curl_easy_cleanup(easy);
	g_object_unref(server.listener);
}

/* --- many requests on one kept-alive connection -------------------------------------------- */

#define KEEPALIVE_REQUESTS 30
/* about a Loki push of a thousand entries: more than one socket buffer */
#define KEEPALIVE_BODY_BYTES (256 * 1024)

typedef struct {
	GSocket *listener;
	guint served;
	guint connections;
	gboolean failed;
} KeepAliveServer;

/* reads one request (head and Content-Length body); FALSE at the end of the connection */
static gboolean
read_request(GSocket *conn, gboolean *failed)
{
	g_autoptr(GString) head = g_string_new(NULL);
	gchar buf[4096];
	const gchar *cl;
	guint64 left;

	while (strstr(head->str, "\r\n\r\n") == NULL) {
		gssize n = g_socket_receive(conn, buf, 1, NULL, NULL);

		if (n <= 0) {
			*failed = head->len > 0;
			return FALSE;
		}
		g_string_append_len(head, buf, n);
	}
	cl = strstr(head->str, "Content-Length: ");
	left = cl != NULL ? g_ascii_strtoull(cl + strlen("Content-Length: "), NULL, 10) : 0;
	while (left > 0) {
		gssize n = g_socket_receive(conn, buf, (gsize)MIN(sizeof(buf), left), NULL, NULL);

		if (n <= 0) {
			*failed = TRUE;
			return FALSE;
		}
		left -= (guint64)n;
	}
	return TRUE;
}

static gpointer
keepalive_server_thread(gpointer user_data)
{
	KeepAliveServer *server = user_data;
	static const gchar reply[] = "HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n";

	/* the client may open a second connection only if the first broke: serve both */
	while (server->served < KEEPALIVE_REQUESTS && !server->failed) {
		g_autoptr(GSocket) conn = g_socket_accept(server->listener, NULL, NULL);

		if (conn == NULL) {
			server->failed = TRUE;
			break;
		}
		server->connections++;
		g_socket_set_blocking(conn, TRUE);
		while (read_request(conn, &server->failed)) {
			if (g_socket_send(conn, reply, strlen(reply), NULL, NULL) < 0) {
				server->failed = TRUE;
				break;
			}
			server->served++;
		}
	}
	return NULL;
}

typedef struct {
	SflCurlLoop *loop;
	CURL *easy;
	guint done_requests;
	CURLcode code;
	gboolean finished;
} KeepAliveClient;

static void
keepalive_done_cb(CURL *easy, CURLcode code, gpointer user_data)
{
	KeepAliveClient *client = user_data;

	client->code = code;
	if (code != CURLE_OK) {
		client->finished = TRUE;
		return;
	}
	client->done_requests++;
	if (client->done_requests == KEEPALIVE_REQUESTS) {
		client->finished = TRUE;
		return;
	}
	/* the next request goes out on the connection the last one left in the cache */
	g_assert_true(sfl_curl_loop_add(client->loop, easy, keepalive_done_cb, client, NULL));
}

/*
 * Requests one after the other on a kept-alive connection, as the Loki sink sends its pushes:
 * each response must be seen as soon as it arrives. With POSIX-style watches on Windows the
 * second one already waited for curl's timeout with 0 bytes received.
 */
static void
test_loop_keepalive_requests(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GSocketAddress) bound = NULL;
	g_autoptr(SflCurlLoop) loop = sfl_curl_loop_new();
	g_autofree gchar *url = NULL;
	g_autofree gchar *body = g_strnfill(KEEPALIVE_BODY_BYTES, 'x');
	KeepAliveServer server = { 0 };
	KeepAliveClient client = { 0 };
	GThread *thread;

	server.listener = loopback_listener(&bound);
	url = loopback_url(bound, "/push");
	thread = g_thread_new("keepalive-server", keepalive_server_thread, &server);

	client.loop = loop;
	client.easy = curl_easy_init();
	curl_easy_setopt(client.easy, CURLOPT_URL, url);
	curl_easy_setopt(client.easy, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(client.easy, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(client.easy, CURLOPT_POSTFIELDSIZE_LARGE,
			 (curl_off_t)KEEPALIVE_BODY_BYTES);
	/* a missed response shows as this timeout, well inside the test's deadline */
	curl_easy_setopt(client.easy, CURLOPT_TIMEOUT, 10L);
	g_assert_true(sfl_curl_loop_add(loop, client.easy, keepalive_done_cb, &client, &error));
	g_assert_true(iterate_until(&client.finished, DEADLINE_S));
	g_assert_cmpint(client.code, ==, CURLE_OK);
	g_assert_cmpuint(client.done_requests, ==, KEEPALIVE_REQUESTS);
	/* ends the server's connection, and with it the thread */
	curl_easy_cleanup(client.easy);
	g_object_unref(loop);
	loop = NULL;
	g_thread_join(thread);
	g_assert_false(server.failed);
	g_assert_cmpuint(server.served, ==, KEEPALIVE_REQUESTS);
	g_assert_cmpuint(server.connections, ==, 1);
	g_object_unref(server.listener);
}

/* every status lands in the class the clients' retry and re-auth policies are written against */
static void
test_http_status_class(void)
{
	static const struct {
		guint status;
		SflHttpClass klass;
		SflError code;
		gboolean retryable;
	} cases[] = {
		{ 200, SFL_HTTP_CLASS_SUCCESS, SFL_ERROR_INTERNAL, FALSE },
		{ 204, SFL_HTTP_CLASS_SUCCESS, SFL_ERROR_INTERNAL, FALSE },
		{ 304, SFL_HTTP_CLASS_REJECTED, SFL_ERROR_REJECTED, FALSE },
		{ 400, SFL_HTTP_CLASS_REJECTED, SFL_ERROR_REJECTED, FALSE },
		{ 401, SFL_HTTP_CLASS_AUTH, SFL_ERROR_AUTH, FALSE },
		{ 403, SFL_HTTP_CLASS_AUTH, SFL_ERROR_AUTH, FALSE },
		{ 404, SFL_HTTP_CLASS_NOT_FOUND, SFL_ERROR_NOT_FOUND, FALSE },
		{ 408, SFL_HTTP_CLASS_TIMEOUT, SFL_ERROR_TRANSIENT, TRUE },
		{ 409, SFL_HTTP_CLASS_CONFLICT, SFL_ERROR_CONFLICT, FALSE },
		{ 412, SFL_HTTP_CLASS_CONFLICT, SFL_ERROR_CONFLICT, FALSE },
		{ 413, SFL_HTTP_CLASS_REJECTED, SFL_ERROR_REJECTED, FALSE },
		{ 429, SFL_HTTP_CLASS_THROTTLED, SFL_ERROR_THROTTLED, TRUE },
		{ 500, SFL_HTTP_CLASS_SERVER, SFL_ERROR_TRANSIENT, TRUE },
		{ 503, SFL_HTTP_CLASS_SERVER, SFL_ERROR_TRANSIENT, TRUE },
		{ 599, SFL_HTTP_CLASS_SERVER, SFL_ERROR_TRANSIENT, TRUE },
	};

	for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
		SflHttpClass klass = sfl_http_status_class(cases[i].status);

		g_test_message("HTTP %u", cases[i].status);
		g_assert_cmpint(klass, ==, cases[i].klass);
		g_assert_cmpint(sfl_http_class_error_code(klass), ==, cases[i].code);
		g_assert_cmpint(sfl_http_class_is_retryable(klass), ==, cases[i].retryable);
	}
}

/* the shared handle refuses plain http when asked to, before any connection is tried */
static void
test_new_easy_https_only(void)
{
	g_autoptr(SflCurlLoop) loop = sfl_curl_loop_new();
	SflCurlEasyOptions options = { .https_only = TRUE };
	CURLcode rc = CURLE_OK;
	CURL *easy = sfl_curl_loop_new_easy(loop, "http://127.0.0.1:9/", &options, &rc);

	g_assert_nonnull(easy);
	g_assert_cmpint(rc, ==, CURLE_OK);
	g_assert_cmpint(curl_easy_perform(easy), ==, CURLE_UNSUPPORTED_PROTOCOL);
	curl_easy_cleanup(easy);
}

/* decisions read the status and the peer's code, so both must outlive prefixing and copying */
static void
test_error_details_survive(void)
{
	g_autoptr(GError) error =
		g_error_new(SFL_ERROR, SFL_ERROR_AUTH, "token endpoint: HTTP 400");
	g_autoptr(GError) copy = NULL;
	g_autoptr(GError) other = g_error_new(G_IO_ERROR, G_IO_ERROR_FAILED, "HTTP 403");

	g_assert_cmpuint(sfl_error_get_http_status(error), ==, 0);
	g_assert_null(sfl_error_get_peer_code(error));
	sfl_error_set_http_status(error, 400);
	sfl_error_set_peer_code(error, "invalid_grant");
	g_prefix_error(&error, "after %u attempts: ", 3u);
	copy = g_error_copy(error);
	g_assert_cmpuint(sfl_error_get_http_status(copy), ==, 400);
	g_assert_cmpstr(sfl_error_get_peer_code(copy), ==, "invalid_grant");
	g_assert_cmpstr(copy->message, ==, "after 3 attempts: token endpoint: HTTP 400");
	/* another domain carries none, whatever its message says */
	sfl_error_set_http_status(other, 403);
	g_assert_cmpuint(sfl_error_get_http_status(other), ==, 0);
	g_assert_null(sfl_error_get_peer_code(NULL));
}

typedef struct {
	GSource **slot;
	guint fired;
	gboolean slot_was_clear;
} OnceProbe;

static void
once_probe_cb(gpointer user_data)
{
	OnceProbe *probe = user_data;

	probe->fired++;
	probe->slot_was_clear = *probe->slot == NULL;
}

static void
drain_default_context(void)
{
	while (g_main_context_iteration(NULL, FALSE))
		;
}

/* re-arming replaces the timer, the slot is clear when it fires, and a cleared one never does */
static void
test_clock_once(void)
{
	g_autoptr(SflClock) clock = sfl_fake_clock_new(0);
	GSource *slot = NULL;
	OnceProbe probe = { .slot = &slot };

	sfl_clock_once(clock, &slot, 1000, "test once", once_probe_cb, &probe, NULL);
	sfl_clock_once(clock, &slot, 5000, "test once", once_probe_cb, &probe, NULL);
	sfl_fake_clock_advance(clock, 1000);
	drain_default_context();
	g_assert_cmpuint(probe.fired, ==, 0);
	g_assert_nonnull(slot);
	sfl_fake_clock_advance(clock, 4000);
	drain_default_context();
	g_assert_cmpuint(probe.fired, ==, 1);
	g_assert_true(probe.slot_was_clear);
	g_assert_null(slot);
	sfl_clock_once(clock, &slot, 10, NULL, once_probe_cb, &probe, NULL);
	sfl_clear_source(&slot);
	sfl_fake_clock_advance(clock, 100);
	drain_default_context();
	g_assert_cmpuint(probe.fired, ==, 1);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/socket-source/unread-input-reported-again",
			test_unread_input_reported_again);
	g_test_add_func("/socket-source/writable-reported-while-wanted",
			test_writable_reported_while_wanted);
	g_test_add_func("/socket-source/quiet-until-new-input", test_quiet_until_new_input);
	g_test_add_func("/curl-loop/large-bodies-both-ways", test_loop_moves_large_bodies);
	g_test_add_func("/curl-loop/keepalive-requests", test_loop_keepalive_requests);
	g_test_add_func("/curl-loop/new-easy-https-only", test_new_easy_https_only);
	g_test_add_func("/http/status-class", test_http_status_class);
	g_test_add_func("/clock/once-rearm-fire-clear", test_clock_once);
	g_test_add_func("/error/details-survive-prefix-and-copy", test_error_details_survive);
	return g_test_run();
}
