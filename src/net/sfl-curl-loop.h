/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <curl/curl.h>
#include <glib-object.h>

G_BEGIN_DECLS

/*
 * SflCurlLoop: one CURLM driven by GSources on the thread-default GMainContext of the thread
 * that created it (docs/architecture.md, "The daemon and its terms").
 *
 * - The socket callback keeps exactly one watch per socket. Watches are GIOChannel watches:
 *   g_io_channel_unix_new() is part of glib.h on every platform (on Windows it accepts a
 *   Winsock SOCKET), never closes the descriptor on unref, and so also covers descriptors that
 *   curl opens itself, such as the threaded resolver's wake-up pair. A GSocket would take
 *   ownership of the descriptor and close it behind curl's back.
 * - The timer callback clears the old timer before arming a new one and arms nothing for -1.
 * - Neither callback ever calls curl_multi_socket_action(); only watch and timer dispatches do.
 * - Finished transfers are taken off the multi handle after curl_multi_socket_action()
 *   returns and delivered from an idle source on the next dispatch.
 *
 * Threading: the creating thread only.
 */

#define SFL_TYPE_CURL_LOOP (sfl_curl_loop_get_type())
G_DECLARE_FINAL_TYPE(SflCurlLoop, sfl_curl_loop, SFL, CURL_LOOP, GObject)

/**
 * SflCurlLoopDoneFunc:
 * @easy: the finished handle, no longer attached to the multi handle
 * @code: curl's result for the transfer
 * @user_data: as given to sfl_curl_loop_add()
 */
typedef void (*SflCurlLoopDoneFunc)(CURL *easy, CURLcode code, gpointer user_data);

SflCurlLoop *sfl_curl_loop_new(void) G_GNUC_WARN_UNUSED_RESULT;

/*
 * TLS material for one request, for peers with their own trust (a Kubernetes API server's
 * cluster CA, Loki's sink.loki.ca_file, client certificates). Each item is a file or PEM in
 * memory; the PEM wins when both are set. Given at all, the CA here is the only one trusted
 * (neither SSL_CERT_FILE/SSL_CERT_DIR nor the system store); with neither @ca_file nor @ca_pem
 * the loop's default trust is used. Only read while the request is started.
 */
typedef struct {
	const gchar *ca_file;
	GBytes *ca_pem;
	const gchar *cert_file;
	GBytes *cert_pem;
	const gchar *key_file;
	GBytes *key_pem;
} SflHttpTls;

/*
 * The baseline of every client's easy handle (sfl_curl_loop_new_easy()); zero fields mean the
 * defaults. Proxies are left to curl, which reads HTTPS_PROXY, https_proxy, http_proxy and
 * NO_PROXY for each transfer.
 */
typedef struct {
	const gchar *user_agent; /* NULL: "sf2loki/<version>" */
	gboolean https_only;	 /* refuse plain http (a bearer token must never travel in clear) */
	const SflHttpTls *tls;	 /* NULL: the loop's default trust, no client certificate */
} SflCurlEasyOptions;

/*
 * Trust: every transfer verifies the peer and its host name. The default trust is read once,
 * when the loop is created, from SSL_CERT_FILE (a PEM bundle) and SSL_CERT_DIR (a hashed
 * certificate directory), each replacing only its own half of curl's compiled-in system store,
 * as OpenSSL and the original's HTTP and gRPC clients do: libcurl passes its own CA paths to
 * OpenSSL, so OpenSSL would never look at these variables itself. A client with a CA of its
 * own (sink.loki.ca_file, a cluster CA) sets it on its own requests (SflHttpTls), never here.
 */
void sfl_curl_loop_set_ca_file(SflCurlLoop *self, const gchar *ca_file);
const gchar *sfl_curl_loop_get_ca_file(SflCurlLoop *self);
const gchar *sfl_curl_loop_get_ca_path(SflCurlLoop *self);
CURLcode sfl_curl_loop_apply_trust(SflCurlLoop *self, CURL *easy);
CURL *sfl_curl_loop_new_easy(SflCurlLoop *self, const gchar *url, const SflCurlEasyOptions *options,
			     CURLcode *rc) G_GNUC_WARN_UNUSED_RESULT;
gboolean sfl_curl_loop_add(SflCurlLoop *self, CURL *easy, SflCurlLoopDoneFunc done,
			   gpointer user_data, GError **error) G_GNUC_WARN_UNUSED_RESULT;
void sfl_curl_loop_remove(SflCurlLoop *self, CURL *easy);
guint sfl_curl_loop_get_n_transfers(SflCurlLoop *self);

G_END_DECLS
