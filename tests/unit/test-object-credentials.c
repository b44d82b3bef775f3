/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTestAwsCreds"

#include "config.h"

#include <glib/gstdio.h>
#include <libsoup/soup.h>
#include <string.h>

#include "sfl-aws-credentials.h"
#include "sfl-error.h"

/*
 * The AWS credential chain (docs/internals/wire-notes.md, "Credentials") in order: environment,
 * shared credentials and config files with AWS_PROFILE, the container endpoint with its
 * authorization token, IMDSv2; expiring credentials refreshed before they expire. The link-local
 * services are a small libsoup server on loopback standing in for 169.254.170.2 and
 * 169.254.169.254.
 */

#define WALL_START ((gint64)1796007600 * G_USEC_PER_SEC)

typedef struct {
	SoupServer *server;
	gchar *base;
	gchar *dir;
	SflClock *clock;
	guint container_calls;
	guint imds_token_calls;
	guint imds_creds_calls;
	gchar *last_authorization;
	gchar *expiration; /* what the services answer */
} Fixture;

static gchar *
iso(gint64 usec)
{
	g_autoptr(GDateTime) dt = g_date_time_new_from_unix_utc(usec / G_USEC_PER_SEC);
	return g_date_time_format(dt, "%Y-%m-%dT%H:%M:%SZ");
}

static void
reply(SoupServerMessage *msg, guint status, const gchar *type, const gchar *body)
{
	soup_server_message_set_status(msg, status, NULL);
	soup_server_message_set_response(msg, type, SOUP_MEMORY_COPY, body, strlen(body));
}

static gchar *
creds_json(Fixture *fx, const gchar *akid)
{
	return g_strdup_printf("{\"Code\": \"Success\", \"Type\": \"AWS-HMAC\", "
			       "\"AccessKeyId\": \"%s\", \"SecretAccessKey\": \"secret-%s\", "
			       "\"Token\": \"token-%s\", \"Expiration\": \"%s\"}",
			       akid, akid, akid, fx->expiration);
}

static void
container_cb(SoupServer *server, SoupServerMessage *msg, const char *path, GHashTable *query,
	     gpointer user_data)
{
	Fixture *fx = user_data;
	SoupMessageHeaders *headers = soup_server_message_get_request_headers(msg);
	g_autofree gchar *body = creds_json(fx, "ASIACONTAINER");

	fx->container_calls++;
	g_free(fx->last_authorization);
	fx->last_authorization = g_strdup(soup_message_headers_get_one(headers, "Authorization"));
	reply(msg, 200, "application/json", body);
}

static void
imds_cb(SoupServer *server, SoupServerMessage *msg, const char *path, GHashTable *query,
	gpointer user_data)
{
	Fixture *fx = user_data;
	SoupMessageHeaders *headers = soup_server_message_get_request_headers(msg);
	const gchar *method = soup_server_message_get_method(msg);
	const gchar *token = soup_message_headers_get_one(headers, "X-aws-ec2-metadata-token");

	if (g_str_equal(path, "/latest/api/token")) {
		/* IMDSv2: a PUT with a ttl, nothing else */
		if (!g_str_equal(method, "PUT") ||
		    soup_message_headers_get_one(headers, "X-aws-ec2-metadata-token-ttl-seconds") ==
			    NULL) {
			reply(msg, 403, "text/plain", "forbidden");
			return;
		}
		fx->imds_token_calls++;
		reply(msg, 200, "text/plain", "imds-session-token");
		return;
	}
	if (g_strcmp0(token, "imds-session-token") != 0) {
		reply(msg, 401, "text/plain", "unauthorized");
		return;
	}
	if (g_str_equal(path, "/latest/meta-data/iam/security-credentials/")) {
		reply(msg, 200, "text/plain", "sf2loki-role\n");
		return;
	}
	if (g_str_equal(path, "/latest/meta-data/iam/security-credentials/sf2loki-role")) {
		g_autofree gchar *body = creds_json(fx, "ASIAINSTANCE");
		fx->imds_creds_calls++;
		reply(msg, 200, "application/json", body);
		return;
	}
	reply(msg, 404, "text/plain", "not found");
}

static void
fixture_setup(Fixture *fx, gconstpointer data)
{
	g_autoptr(GError) error = NULL;
	GSList *uris;

	fx->clock = sfl_fake_clock_new(WALL_START);
	fx->expiration = iso(WALL_START + (gint64)3600 * G_USEC_PER_SEC);
	fx->dir = g_dir_make_tmp("sfl-test-aws-XXXXXX", &error);
	g_assert_no_error(error);
	fx->server = soup_server_new(NULL, NULL);
	soup_server_add_handler(fx->server, "/v2/credentials", container_cb, fx, NULL);
	soup_server_add_handler(fx->server, "/latest", imds_cb, fx, NULL);
	soup_server_listen_local(fx->server, 0, SOUP_SERVER_LISTEN_IPV4_ONLY, &error);
	g_assert_no_error(error);
	uris = soup_server_get_uris(fx->server);
	fx->base = g_uri_to_string(uris->data);
	g_slist_free_full(uris, (GDestroyNotify)g_uri_unref);
	while (g_str_has_suffix(fx->base, "/"))
		fx->base[strlen(fx->base) - 1] = '\0';
}

static void
fixture_teardown(Fixture *fx, gconstpointer data)
{
	g_autofree gchar *cmd = g_strdup_printf("rm -rf '%s'", fx->dir);

	g_clear_object(&fx->server);
	while (g_main_context_iteration(NULL, FALSE))
		;
	g_assert_cmpint(system(cmd), ==, 0);
	g_free(fx->dir);
	g_free(fx->base);
	g_free(fx->last_authorization);
	g_free(fx->expiration);
	sfl_clock_unref(fx->clock);
}

static void
done_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	*(GAsyncResult **)user_data = g_object_ref(result);
}

static SflAwsCredentials *
resolve(SflAwsCredentialProvider *provider, GError **error)
{
	g_autoptr(GAsyncResult) result = NULL;
	gint64 deadline = g_get_monotonic_time() + 30 * G_USEC_PER_SEC;

	sfl_aws_credential_provider_get_async(provider, NULL, done_cb, &result);
	while (result == NULL) {
		if (g_get_monotonic_time() > deadline)
			g_error("the credential chain did not finish within 30 s");
		g_main_context_iteration(NULL, TRUE);
	}
	return sfl_aws_credential_provider_get_finish(provider, result, error);
}

/* a provider on @env (NAME=VALUE, ...) with HOME in the fixture and the stand-in services */
static SflAwsCredentialProvider *
provider_new(Fixture *fx, const gchar *const *env)
{
	g_auto(GStrv) envp = g_new0(gchar *, 1);
	SflAwsCredentialProvider *provider;

	envp = g_environ_setenv(envp, "HOME", fx->dir, TRUE);
	for (guint i = 0; env != NULL && env[i] != NULL; i++) {
		g_auto(GStrv) kv = g_strsplit(env[i], "=", 2);
		envp = g_environ_setenv(envp, kv[0], kv[1], TRUE);
	}
	provider = sfl_aws_credential_provider_new((const gchar *const *)envp, NULL, fx->clock);
	sfl_aws_credential_provider_set_link_local(provider, fx->base, fx->base);
	return provider;
}

static void
write_file(Fixture *fx, const gchar *name, const gchar *text)
{
	g_autofree gchar *aws = g_build_filename(fx->dir, ".aws", NULL);
	g_autofree gchar *path = g_build_filename(aws, name, NULL);
	g_autoptr(GError) error = NULL;

	g_mkdir_with_parents(aws, 0700);
	g_file_set_contents(path, text, -1, &error);
	g_assert_no_error(error);
}

static void
test_environment_first(Fixture *fx, gconstpointer data)
{
	const gchar *env[] = { "AWS_ACCESS_KEY_ID=AKIDENV", "AWS_SECRET_ACCESS_KEY=env-secret",
			       "AWS_SECURITY_TOKEN=legacy-token", "AWS_PROFILE=other", NULL };
	g_autoptr(SflAwsCredentialProvider) p = NULL;
	g_autoptr(SflAwsCredentials) c = NULL;
	g_autoptr(GError) error = NULL;

	/* a shared file exists too: the environment wins */
	write_file(fx, "credentials",
		   "[other]\naws_access_key_id = AKIDFILE\n"
		   "aws_secret_access_key = file-secret\n");
	p = provider_new(fx, env);
	c = resolve(p, &error);
	g_assert_no_error(error);
	g_assert_cmpstr(c->access_key_id, ==, "AKIDENV");
	g_assert_cmpstr(c->secret_access_key, ==, "env-secret");
	g_assert_cmpstr(c->session_token, ==, "legacy-token");
	g_assert_cmpstr(c->source, ==, "environment");
	g_assert_cmpint(c->expires_usec, ==, 0);
}

static void
test_environment_incomplete(Fixture *fx, gconstpointer data)
{
	const gchar *secret_only[] = { "AWS_SECRET_ACCESS_KEY=env-secret", NULL };
	const gchar *key_only[] = { "AWS_ACCESS_KEY_ID=AKIDENV", NULL };
	const gchar *bad_expiry[] = { "AWS_ACCESS_KEY_ID=AKIDENV", "AWS_SECRET_ACCESS_KEY=s",
				      "AWS_CREDENTIAL_EXPIRATION=tomorrow", NULL };
	const gchar *const *cases[] = { secret_only, key_only, bad_expiry };

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(SflAwsCredentialProvider) p = provider_new(fx, cases[i]);
		g_autoptr(GError) error = NULL;
		g_autoptr(SflAwsCredentials) c = resolve(p, &error);

		g_assert_null(c);
		g_assert_error(error, SFL_ERROR, SFL_ERROR_AUTH);
		g_assert_null(strstr(error->message, "env-secret"));
	}
}

static void
test_shared_files_and_profile(Fixture *fx, gconstpointer data)
{
	const gchar *profile[] = { "AWS_PROFILE=ops", NULL };
	const gchar *config_only[] = { "AWS_PROFILE=cfg", NULL };
	const gchar *none[] = { "AWS_EC2_METADATA_DISABLED=true", NULL };
	g_autoptr(GError) error = NULL;

	write_file(fx, "credentials",
		   "# comment\n; another\n[default]\naws_access_key_id=AKIDDEFAULT\n"
		   "aws_secret_access_key=default-secret\n\n[ops]\n"
		   "aws_access_key_id = AKIDOPS\naws_secret_access_key = ops-secret\n"
		   "aws_session_token = ops-token\n");
	write_file(fx, "config",
		   "[profile cfg]\nregion = eu-west-1\n"
		   "aws_access_key_id = AKIDCFG\naws_secret_access_key = cfg-secret\n");
	{
		g_autoptr(SflAwsCredentialProvider) p = provider_new(fx, profile);
		g_autoptr(SflAwsCredentials) c = resolve(p, &error);
		g_assert_no_error(error);
		g_assert_cmpstr(c->access_key_id, ==, "AKIDOPS");
		g_assert_cmpstr(c->session_token, ==, "ops-token");
		g_assert_nonnull(strstr(c->source, "[ops]"));
	}
	{
		g_autoptr(SflAwsCredentialProvider) p = provider_new(fx, config_only);
		g_autoptr(SflAwsCredentials) c = resolve(p, &error);
		g_assert_no_error(error);
		g_assert_cmpstr(c->access_key_id, ==, "AKIDCFG");
		g_assert_null(c->session_token);
	}
	{
		g_autoptr(SflAwsCredentialProvider) p = provider_new(fx, none);
		g_autoptr(SflAwsCredentials) c = resolve(p, &error);
		g_assert_no_error(error);
		g_assert_cmpstr(c->access_key_id, ==, "AKIDDEFAULT");
	}
}

static void
test_shared_file_half_profile(Fixture *fx, gconstpointer data)
{
	const gchar *env[] = { "AWS_PROFILE=half", NULL };
	g_autoptr(SflAwsCredentialProvider) p = NULL;
	g_autoptr(SflAwsCredentials) c = NULL;
	g_autoptr(GError) error = NULL;

	write_file(fx, "credentials", "[half]\naws_access_key_id = AKIDHALF\n");
	p = provider_new(fx, env);
	c = resolve(p, &error);
	g_assert_null(c);
	g_assert_error(error, SFL_ERROR, SFL_ERROR_AUTH);
	g_assert_nonnull(strstr(error->message, "[half]"));
}

static void
test_container_relative(Fixture *fx, gconstpointer data)
{
	g_autofree gchar *token_path = g_build_filename(fx->dir, "token", NULL);
	g_autofree gchar *token_env =
		g_strdup_printf("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE=%s", token_path);
	const gchar *env[] = { "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI=/v2/credentials/abc",
			       token_env, "AWS_CONTAINER_AUTHORIZATION_TOKEN=ignored", NULL };
	g_autoptr(SflAwsCredentialProvider) p = NULL;
	g_autoptr(SflAwsCredentials) c = NULL;
	g_autoptr(SflAwsCredentials) again = NULL;
	g_autoptr(GError) error = NULL;

	g_assert_true(g_file_set_contents(token_path, "file-token\n", -1, NULL));
	p = provider_new(fx, env);
	c = resolve(p, &error);
	g_assert_no_error(error);
	g_assert_cmpstr(c->access_key_id, ==, "ASIACONTAINER");
	g_assert_cmpstr(c->session_token, ==, "token-ASIACONTAINER");
	g_assert_cmpint(c->expires_usec, ==, WALL_START + (gint64)3600 * G_USEC_PER_SEC);
	/* the raw token from the file (preferred), no "Bearer" */
	g_assert_cmpstr(fx->last_authorization, ==, "file-token");
	/* cached while good for five more minutes, fetched again after */
	sfl_fake_clock_advance(fx->clock, (gint64)54 * 60 * G_USEC_PER_SEC);
	again = resolve(p, &error);
	g_assert_cmpuint(fx->container_calls, ==, 1);
	g_clear_pointer(&again, sfl_aws_credentials_free);
	sfl_fake_clock_advance(fx->clock, (gint64)2 * 60 * G_USEC_PER_SEC);
	again = resolve(p, &error);
	g_assert_no_error(error);
	g_assert_cmpuint(fx->container_calls, ==, 2);
}

static void
test_container_full_uri(Fixture *fx, gconstpointer data)
{
	g_autofree gchar *full = g_strdup_printf("AWS_CONTAINER_CREDENTIALS_FULL_URI=%s/v2/"
						 "credentials/full",
						 fx->base);
	const gchar *env[] = { full, "AWS_CONTAINER_AUTHORIZATION_TOKEN=env-token", NULL };
	const gchar *remote[] = { "AWS_CONTAINER_CREDENTIALS_FULL_URI=http://192.0.2.1/creds",
				  NULL };
	const gchar *crlf[] = { full, "AWS_CONTAINER_AUTHORIZATION_TOKEN=a\r\nX-Evil: 1", NULL };
	g_autoptr(GError) error = NULL;

	{
		g_autoptr(SflAwsCredentialProvider) p = provider_new(fx, env);
		g_autoptr(SflAwsCredentials) c = resolve(p, &error);
		g_assert_no_error(error);
		g_assert_cmpstr(c->access_key_id, ==, "ASIACONTAINER");
		g_assert_cmpstr(fx->last_authorization, ==, "env-token");
	}
	{
		/* only loopback or the container addresses over plain HTTP */
		g_autoptr(SflAwsCredentialProvider) p = provider_new(fx, remote);
		g_autoptr(SflAwsCredentials) c = resolve(p, &error);
		g_assert_null(c);
		g_assert_error(error, SFL_ERROR, SFL_ERROR_AUTH);
		g_clear_error(&error);
	}
	{
		g_autoptr(SflAwsCredentialProvider) p = provider_new(fx, crlf);
		g_autoptr(SflAwsCredentials) c = resolve(p, &error);
		g_assert_null(c);
		g_assert_error(error, SFL_ERROR, SFL_ERROR_AUTH);
		g_assert_nonnull(strstr(error->message, "line break"));
		g_assert_cmpuint(fx->container_calls, ==, 1);
	}
}

static void
test_imds_v2(Fixture *fx, gconstpointer data)
{
	g_autoptr(SflAwsCredentialProvider) p = provider_new(fx, NULL);
	g_autoptr(SflAwsCredentials) c = NULL;
	g_autoptr(GError) error = NULL;

	c = resolve(p, &error);
	g_assert_no_error(error);
	g_assert_cmpstr(c->access_key_id, ==, "ASIAINSTANCE");
	g_assert_cmpstr(c->secret_access_key, ==, "secret-ASIAINSTANCE");
	g_assert_cmpstr(c->source, ==, "instance metadata");
	g_assert_cmpuint(fx->imds_token_calls, ==, 1);
	g_assert_cmpuint(fx->imds_creds_calls, ==, 1);
}

static void
test_imds_endpoint_env_and_disabled(Fixture *fx, gconstpointer data)
{
	g_autofree gchar *endpoint =
		g_strdup_printf("AWS_EC2_METADATA_SERVICE_ENDPOINT=%s/", fx->base);
	const gchar *env[] = { endpoint, NULL };
	const gchar *disabled[] = { "AWS_EC2_METADATA_DISABLED=true", NULL };
	g_autoptr(GError) error = NULL;

	{
		g_autoptr(SflAwsCredentialProvider) p = provider_new(fx, env);
		g_autoptr(SflAwsCredentials) c = NULL;
		/* the link-local stand-in points nowhere: only the variable can reach the server */
		sfl_aws_credential_provider_set_link_local(p, "http://127.0.0.1:9",
							   "http://127.0.0.1:9");
		c = resolve(p, &error);
		g_assert_no_error(error);
		g_assert_cmpstr(c->access_key_id, ==, "ASIAINSTANCE");
	}
	{
		g_autoptr(SflAwsCredentialProvider) p = provider_new(fx, disabled);
		g_autoptr(SflAwsCredentials) c = resolve(p, &error);
		g_assert_null(c);
		g_assert_error(error, SFL_ERROR, SFL_ERROR_AUTH);
		g_assert_nonnull(strstr(error->message, "no AWS credentials"));
		g_assert_cmpuint(fx->imds_token_calls, ==, 1);
	}
}

static void
test_concurrent_callers_share(Fixture *fx, gconstpointer data)
{
	g_autoptr(SflAwsCredentialProvider) p = provider_new(fx, NULL);
	GAsyncResult *results[3] = { NULL, NULL, NULL };
	gboolean all = FALSE;

	for (guint i = 0; i < 3; i++)
		sfl_aws_credential_provider_get_async(p, NULL, done_cb, &results[i]);
	while (!all) {
		g_main_context_iteration(NULL, TRUE);
		all = results[0] != NULL && results[1] != NULL && results[2] != NULL;
	}
	for (guint i = 0; i < 3; i++) {
		g_autoptr(GError) error = NULL;
		g_autoptr(SflAwsCredentials) c =
			sfl_aws_credential_provider_get_finish(p, results[i], &error);
		g_assert_no_error(error);
		g_assert_cmpstr(c->access_key_id, ==, "ASIAINSTANCE");
		g_object_unref(results[i]);
	}
	g_assert_cmpuint(fx->imds_creds_calls, ==, 1);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
#define ADD(name, func)                                                                            \
	g_test_add("/sfl/aws-credentials/" name, Fixture, NULL, fixture_setup, func,               \
		   fixture_teardown)
	ADD("environment-first", test_environment_first);
	ADD("environment-incomplete", test_environment_incomplete);
	ADD("shared-files-and-profile", test_shared_files_and_profile);
	ADD("shared-file-half-profile", test_shared_file_half_profile);
	ADD("container-relative", test_container_relative);
	ADD("container-full-uri", test_container_full_uri);
	ADD("imds-v2", test_imds_v2);
	ADD("imds-endpoint-env-and-disabled", test_imds_endpoint_env_and_disabled);
	ADD("concurrent-callers-share", test_concurrent_callers_share);
	return g_test_run();
}
