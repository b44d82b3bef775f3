/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflCurlLoop"

#include "config.h"

#include "sfl-curl-loop.h"

#include "sfl-error.h"
#include "sfl-gsource.h"
#include "sfl-platform.h"
#include "sfl-socket-source.h"

typedef struct {
	SflCurlLoopDoneFunc done;
	gpointer user_data;
	CURLcode code;
} SflCurlLoopTransfer;

typedef struct {
	SflCurlLoop *loop; /* unowned: the loop frees its sockets first */
	curl_socket_t fd;
	int what;
	GSource *watch; /* an SflSocketSource */
} SflCurlLoopSocket;

struct _SflCurlLoop {
	GObject parent_instance;
	GMainContext *context;
	CURLM *multi;
	GSource *timer;
	GSource *deliver;
	GHashTable *transfers;	   /* CURL* → SflCurlLoopTransfer* (in the multi handle) */
	GQueue finished;	   /* CURL*, taken off the multi handle, waiting for delivery */
	GHashTable *finished_data; /* CURL* → SflCurlLoopTransfer* for @finished */
	GHashTable *sockets;	   /* set of SflCurlLoopSocket* with a watch */
	gchar *ca_file;		   /* SSL_CERT_FILE, NULL: curl's compiled-in bundle */
	gchar *ca_path;		   /* SSL_CERT_DIR, NULL: curl's compiled-in directory */
	gboolean disposing;
};

G_DEFINE_TYPE(SflCurlLoop, sfl_curl_loop, G_TYPE_OBJECT)

static void
sfl_curl_loop_socket_free(SflCurlLoopSocket *sock)
{
	sfl_clear_source(&sock->watch);
	g_free(sock);
}

static gboolean sfl_curl_loop_deliver_cb(gpointer user_data);

/* called only after curl_multi_socket_action() has returned */
static void
sfl_curl_loop_collect(SflCurlLoop *self)
{
	CURLMsg *msg = NULL;
	int left = 0;

	while ((msg = curl_multi_info_read(self->multi, &left)) != NULL) {
		CURL *easy = msg->easy_handle;
		CURLcode code = msg->data.result;
		SflCurlLoopTransfer *transfer = NULL;

		if (msg->msg != CURLMSG_DONE)
			continue;
		if (!g_hash_table_steal_extended(self->transfers, easy, NULL,
						 (gpointer *)&transfer))
			continue;
		curl_multi_remove_handle(self->multi, easy);
		transfer->code = code;
		g_hash_table_insert(self->finished_data, easy, transfer);
		g_queue_push_tail(&self->finished, easy);
	}
	if (!g_queue_is_empty(&self->finished) && self->deliver == NULL) {
		self->deliver = g_idle_source_new();
		g_source_set_priority(self->deliver, G_PRIORITY_DEFAULT);
		g_source_set_name(self->deliver, "[sf2loki] curl completions");
		g_source_set_callback(self->deliver, sfl_curl_loop_deliver_cb, self, NULL);
		g_source_attach(self->deliver, self->context);
	}
}

static gboolean
sfl_curl_loop_deliver_cb(gpointer user_data)
{
	g_autoptr(SflCurlLoop) self = g_object_ref(SFL_CURL_LOOP(user_data));

	sfl_clear_source(&self->deliver);
	while (!g_queue_is_empty(&self->finished)) {
		CURL *easy = g_queue_pop_head(&self->finished);
		g_autofree SflCurlLoopTransfer *transfer = NULL;

		if (!g_hash_table_steal_extended(self->finished_data, easy, NULL,
						 (gpointer *)&transfer))
			continue;
		transfer->done(easy, transfer->code, transfer->user_data);
	}
	return G_SOURCE_REMOVE;
}

static void
sfl_curl_loop_action(SflCurlLoop *self, curl_socket_t fd, int flags)
{
	int running = 0;
	CURLMcode mcode = curl_multi_socket_action(self->multi, fd, flags, &running);

	if (mcode != CURLM_OK)
		g_warning("curl_multi_socket_action: %s", curl_multi_strerror(mcode));
	sfl_curl_loop_collect(self);
}

/*
 * Every readiness the source saw goes to curl at once. The source reports it again for as long
 * as it lasts and curl still asks for it, which is what edge-like Windows sockets need.
 */
static gboolean
sfl_curl_loop_watch_cb(GIOCondition condition, gpointer user_data)
{
	SflCurlLoopSocket *sock = user_data;
	g_autoptr(SflCurlLoop) self = g_object_ref(sock->loop);
	curl_socket_t fd = sock->fd;
	int flags = 0;

	if (condition & G_IO_IN)
		flags |= CURL_CSELECT_IN;
	if (condition & G_IO_OUT)
		flags |= CURL_CSELECT_OUT;
	if (condition & G_IO_ERR)
		flags |= CURL_CSELECT_ERR;
	/* @sock may be freed inside: curl reports CURL_POLL_REMOVE from socket_action */
	sfl_curl_loop_action(self, fd, flags);
	return G_SOURCE_CONTINUE;
}

static gboolean
sfl_curl_loop_timer_cb(gpointer user_data)
{
	g_autoptr(SflCurlLoop) self = g_object_ref(SFL_CURL_LOOP(user_data));

	/* clear first: curl may re-arm the timer from inside socket_action */
	sfl_clear_source(&self->timer);
	sfl_curl_loop_action(self, CURL_SOCKET_TIMEOUT, 0);
	return G_SOURCE_REMOVE;
}

/* CURLMOPT_TIMERFUNCTION: only (re)arms a source, never calls into curl */
static int
sfl_curl_loop_timer_func(CURLM *multi, long timeout_ms, void *userp)
{
	SflCurlLoop *self = userp;

	(void)multi;
	sfl_clear_source(&self->timer);
	if (timeout_ms < 0 || self->disposing)
		return 0;
	self->timer = g_timeout_source_new((guint)MIN(timeout_ms, (long)G_MAXINT));
	g_source_set_name(self->timer, "[sf2loki] curl timer");
	g_source_set_callback(self->timer, sfl_curl_loop_timer_cb, self, NULL);
	g_source_attach(self->timer, self->context);
	return 0;
}

/* CURLMOPT_SOCKETFUNCTION: one watch per socket, kept while curl changes what it waits for */
static int
sfl_curl_loop_socket_func(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
	SflCurlLoop *self = userp;
	SflCurlLoopSocket *sock = socketp;
	GIOCondition condition = 0;

	(void)easy;
	/* while the multi handle is cleaned up, dispose frees every socket afterwards */
	if (self->disposing)
		return 0;
	if (what == CURL_POLL_REMOVE) {
		if (sock != NULL) {
			curl_multi_assign(self->multi, fd, NULL);
			g_hash_table_remove(self->sockets, sock);
		}
		return 0;
	}
	if (what & CURL_POLL_IN)
		condition |= G_IO_IN;
	if (what & CURL_POLL_OUT)
		condition |= G_IO_OUT;
	if (sock != NULL) {
		if (sock->what != what)
			sfl_socket_source_set_condition(sock->watch, condition);
		sock->what = what;
		return 0;
	}
	{
		g_autoptr(GError) error = NULL;
		/* does not take ownership: curl closes its own sockets */
		GSource *watch = sfl_socket_source_new((gint64)fd, condition, &error);

		if (watch == NULL) {
			/* curl fails the transfer that wanted this socket */
			g_warning("cannot watch an HTTP connection: %s", error->message);
			return -1;
		}
		sock = g_new0(SflCurlLoopSocket, 1);
		sock->loop = self;
		sock->fd = fd;
		sock->what = what;
		sock->watch = watch;
	}
	g_source_set_name(sock->watch, "[sf2loki] curl socket");
	g_source_set_callback(sock->watch, (GSourceFunc)(void (*)(void))sfl_curl_loop_watch_cb,
			      sock, NULL);
	g_source_attach(sock->watch, self->context);
	curl_multi_assign(self->multi, fd, sock);
	g_hash_table_add(self->sockets, sock);
	return 0;
}

static void
sfl_curl_loop_dispose(GObject *object)
{
	SflCurlLoop *self = SFL_CURL_LOOP(object);

	self->disposing = TRUE;
	if (self->multi != NULL) {
		GHashTableIter iter;
		gpointer easy = NULL;

		g_hash_table_iter_init(&iter, self->transfers);
		while (g_hash_table_iter_next(&iter, &easy, NULL))
			curl_multi_remove_handle(self->multi, easy);
		curl_multi_cleanup(self->multi);
		self->multi = NULL;
	}
	g_hash_table_remove_all(self->sockets);
	g_hash_table_remove_all(self->transfers);
	g_queue_clear(&self->finished);
	g_hash_table_remove_all(self->finished_data);
	sfl_clear_source(&self->timer);
	sfl_clear_source(&self->deliver);
	G_OBJECT_CLASS(sfl_curl_loop_parent_class)->dispose(object);
}

static void
sfl_curl_loop_finalize(GObject *object)
{
	SflCurlLoop *self = SFL_CURL_LOOP(object);

	g_hash_table_unref(self->transfers);
	g_hash_table_unref(self->finished_data);
	g_hash_table_unref(self->sockets);
	g_main_context_unref(self->context);
	g_free(self->ca_file);
	g_free(self->ca_path);
	G_OBJECT_CLASS(sfl_curl_loop_parent_class)->finalize(object);
}

static void
sfl_curl_loop_class_init(SflCurlLoopClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);

	object_class->dispose = sfl_curl_loop_dispose;
	object_class->finalize = sfl_curl_loop_finalize;
}

/* an unset or blank variable means the system store, as it does for OpenSSL */
static gchar *
sfl_curl_loop_env_path(const gchar *name)
{
	const gchar *value = g_getenv(name);

	if (value == NULL)
		return NULL;
	for (const gchar *p = value; *p != '\0'; p++) {
		if (!g_ascii_isspace(*p))
			return g_strdup(value);
	}
	return NULL;
}

static void
sfl_curl_loop_init(SflCurlLoop *self)
{
	static gsize curl_initialised = 0;

	if (g_once_init_enter(&curl_initialised)) {
		curl_global_init(CURL_GLOBAL_DEFAULT);
		g_once_init_leave(&curl_initialised, 1);
	}
	self->context = g_main_context_ref_thread_default();
	self->transfers = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
	self->finished_data = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
	self->sockets = g_hash_table_new_full(g_direct_hash, g_direct_equal,
					      (GDestroyNotify)sfl_curl_loop_socket_free, NULL);
	g_queue_init(&self->finished);
	self->multi = curl_multi_init();
	curl_multi_setopt(self->multi, CURLMOPT_SOCKETFUNCTION, sfl_curl_loop_socket_func);
	curl_multi_setopt(self->multi, CURLMOPT_SOCKETDATA, self);
	curl_multi_setopt(self->multi, CURLMOPT_TIMERFUNCTION, sfl_curl_loop_timer_func);
	curl_multi_setopt(self->multi, CURLMOPT_TIMERDATA, self);
	self->ca_file = sfl_curl_loop_env_path("SSL_CERT_FILE");
	self->ca_path = sfl_curl_loop_env_path("SSL_CERT_DIR");
}

/**
 * sfl_curl_loop_new:
 *
 * Returns: (transfer full): a loop bound to the calling thread's thread-default context
 */
SflCurlLoop *
sfl_curl_loop_new(void)
{
	return g_object_new(SFL_TYPE_CURL_LOOP, NULL);
}

/**
 * sfl_curl_loop_set_ca_file:
 * @self: a loop
 * @ca_file: (nullable): a PEM CA bundle, %NULL for curl's compiled-in one
 *
 * Replaces the bundle read from SSL_CERT_FILE for every transfer on this loop that has no CA
 * of its own; for embedders and tests that cannot set the environment before the loop exists.
 */
void
sfl_curl_loop_set_ca_file(SflCurlLoop *self, const gchar *ca_file)
{
	g_return_if_fail(SFL_IS_CURL_LOOP(self));
	g_free(self->ca_file);
	self->ca_file = g_strdup(ca_file);
}

/**
 * sfl_curl_loop_get_ca_file:
 * @self: a loop
 *
 * Returns: (transfer none) (nullable): the default CA bundle, %NULL for curl's compiled-in one
 */
const gchar *
sfl_curl_loop_get_ca_file(SflCurlLoop *self)
{
	g_return_val_if_fail(SFL_IS_CURL_LOOP(self), NULL);
	return self->ca_file;
}

/**
 * sfl_curl_loop_get_ca_path:
 * @self: a loop
 *
 * Returns: (transfer none) (nullable): the default CA directory (SSL_CERT_DIR), %NULL for
 *   curl's compiled-in one
 */
const gchar *
sfl_curl_loop_get_ca_path(SflCurlLoop *self)
{
	g_return_val_if_fail(SFL_IS_CURL_LOOP(self), NULL);
	return self->ca_path;
}

/**
 * sfl_curl_loop_apply_trust:
 * @self: a loop
 * @easy: a handle about to be added to @self
 *
 * Turns peer and host verification on and points @easy at the loop's default trust. A client
 * with its own CA sets CURLOPT_CAINFO (and clears CURLOPT_CAPATH) afterwards. Proxies are left
 * to curl, which reads HTTPS_PROXY, https_proxy, http_proxy and NO_PROXY for each transfer.
 *
 * Returns: curl's result of the first option that failed, else CURLE_OK
 */
CURLcode
sfl_curl_loop_apply_trust(SflCurlLoop *self, CURL *easy)
{
	CURLcode rc = CURLE_OK;

	g_return_val_if_fail(SFL_IS_CURL_LOOP(self), CURLE_BAD_FUNCTION_ARGUMENT);
	g_return_val_if_fail(easy != NULL, CURLE_BAD_FUNCTION_ARGUMENT);

	rc = curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, 1L);
	if (rc == CURLE_OK)
		rc = curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, 2L);
	if (rc == CURLE_OK && self->ca_file != NULL)
		rc = curl_easy_setopt(easy, CURLOPT_CAINFO, self->ca_file);
	if (rc == CURLE_OK && self->ca_path != NULL)
		rc = curl_easy_setopt(easy, CURLOPT_CAPATH, self->ca_path);
	/* where the OS store is no PEM file (Windows), OpenSSL has no default bundle to fall to */
	if (rc == CURLE_OK && self->ca_file == NULL && self->ca_path == NULL &&
	    sfl_platform_tls_native_ca())
		rc = curl_easy_setopt(easy, CURLOPT_SSL_OPTIONS, (long)CURLSSLOPT_NATIVE_CA);
	return rc;
}

static CURLcode
sfl_curl_set_blob(CURL *easy, CURLoption option, GBytes *bytes)
{
	struct curl_blob blob = { 0 };
	gsize len = 0;

	blob.data = (void *)g_bytes_get_data(bytes, &len);
	blob.len = len;
	/* the caller's bytes need not outlive the start of the request */
	blob.flags = CURL_BLOB_COPY;
	return curl_easy_setopt(easy, option, &blob);
}

/* one TLS item: the PEM in memory, else the file, else nothing */
static CURLcode
sfl_curl_set_tls_item(CURL *easy, CURLoption blob_option, GBytes *pem, CURLoption file_option,
		      const gchar *file)
{
	if (pem != NULL)
		return sfl_curl_set_blob(easy, blob_option, pem);
	if (file != NULL)
		return curl_easy_setopt(easy, file_option, file);
	return CURLE_OK;
}

static CURLcode
sfl_curl_set_tls(SflCurlLoop *self, CURL *easy, const SflHttpTls *tls)
{
	CURLcode rc = CURLE_OK;

	rc |= sfl_curl_loop_apply_trust(self, easy);
	if (tls == NULL)
		return rc;
	if (tls->ca_pem != NULL || tls->ca_file != NULL) {
		/* the client's own CA is all it trusts: not the system directory as well */
		rc |= sfl_curl_set_tls_item(easy, CURLOPT_CAINFO_BLOB, tls->ca_pem, CURLOPT_CAINFO,
					    tls->ca_file);
		rc |= curl_easy_setopt(easy, CURLOPT_CAPATH, NULL);
		/* nor the Windows store that sfl_curl_loop_apply_trust() may have added */
		rc |= curl_easy_setopt(easy, CURLOPT_SSL_OPTIONS, 0L);
	}
	rc |= sfl_curl_set_tls_item(easy, CURLOPT_SSLCERT_BLOB, tls->cert_pem, CURLOPT_SSLCERT,
				    tls->cert_file);
	rc |= sfl_curl_set_tls_item(easy, CURLOPT_SSLKEY_BLOB, tls->key_pem, CURLOPT_SSLKEY,
				    tls->key_file);
	return rc;
}

/**
 * sfl_curl_loop_new_easy:
 * @self: a loop
 * @url: the transfer's URL
 * @options: (nullable): the client's user agent, scheme policy and TLS material
 * @rc: (inout): curl's result of each option is or-ed in, as the callers do with theirs
 *
 * The one place an easy handle gets its baseline: the URL, the allowed schemes, no signals, the
 * user agent, the loop's trust or the client's own CA and certificate, and no redirects. The
 * caller sets what is its own (headers, callbacks, timeouts, HTTP version) and adds it.
 *
 * Returns: (transfer full) (nullable): the handle, %NULL when curl cannot create one
 */
CURL *
sfl_curl_loop_new_easy(SflCurlLoop *self, const gchar *url, const SflCurlEasyOptions *options,
		       CURLcode *rc)
{
	static const SflCurlEasyOptions defaults = { 0 };
	CURL *easy = NULL;

	g_return_val_if_fail(SFL_IS_CURL_LOOP(self), NULL);
	g_return_val_if_fail(url != NULL, NULL);
	g_return_val_if_fail(rc != NULL, NULL);

	if (options == NULL)
		options = &defaults;
	easy = curl_easy_init();
	if (easy == NULL)
		return NULL;
	*rc |= curl_easy_setopt(easy, CURLOPT_URL, url);
	*rc |= curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR,
				options->https_only ? "https" : "http,https");
	*rc |= curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
	*rc |= curl_easy_setopt(easy, CURLOPT_USERAGENT,
				options->user_agent != NULL ? options->user_agent
							    : "sf2loki/" PACKAGE_VERSION);
	*rc |= sfl_curl_set_tls(self, easy, options->tls);
	*rc |= curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L);
	return easy;
}

/**
 * sfl_curl_loop_add:
 * @self: a loop
 * @easy: (transfer none): a configured easy handle; the caller keeps it alive until @done
 *   runs or it calls sfl_curl_loop_remove()
 * @done: called once, from the loop's context, after the transfer ended
 * @user_data: for @done
 * @error: return location for an error
 *
 * Returns: %TRUE when the transfer started
 */
gboolean
sfl_curl_loop_add(SflCurlLoop *self, CURL *easy, SflCurlLoopDoneFunc done, gpointer user_data,
		  GError **error)
{
	SflCurlLoopTransfer *transfer = NULL;
	CURLMcode mcode;

	g_return_val_if_fail(SFL_IS_CURL_LOOP(self), FALSE);
	g_return_val_if_fail(easy != NULL, FALSE);
	g_return_val_if_fail(done != NULL, FALSE);
	g_return_val_if_fail(error == NULL || *error == NULL, FALSE);

	transfer = g_new0(SflCurlLoopTransfer, 1);
	transfer->done = done;
	transfer->user_data = user_data;
	g_hash_table_insert(self->transfers, easy, transfer);
	/* arms the timer through the timer callback; the transfer starts from its dispatch */
	mcode = curl_multi_add_handle(self->multi, easy);
	if (mcode != CURLM_OK) {
		g_hash_table_remove(self->transfers, easy);
		g_set_error(error, SFL_ERROR, SFL_ERROR_INTERNAL, "cannot start HTTP transfer: %s",
			    curl_multi_strerror(mcode));
		return FALSE;
	}
	return TRUE;
}

/**
 * sfl_curl_loop_remove:
 * @self: a loop
 * @easy: a handle given to sfl_curl_loop_add()
 *
 * Aborts the transfer; its done function is not called. Must not be called from inside a
 * curl callback.
 */
void
sfl_curl_loop_remove(SflCurlLoop *self, CURL *easy)
{
	g_return_if_fail(SFL_IS_CURL_LOOP(self));
	if (g_hash_table_remove(self->transfers, easy)) {
		curl_multi_remove_handle(self->multi, easy);
		return;
	}
	if (g_hash_table_remove(self->finished_data, easy))
		g_queue_remove(&self->finished, easy);
}

/**
 * sfl_curl_loop_get_n_transfers:
 * @self: a loop
 *
 * Returns: transfers running or waiting for delivery
 */
guint
sfl_curl_loop_get_n_transfers(SflCurlLoop *self)
{
	g_return_val_if_fail(SFL_IS_CURL_LOOP(self), 0);
	return g_hash_table_size(self->transfers) + g_hash_table_size(self->finished_data);
}
