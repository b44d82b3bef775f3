/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include "sfl-checkpoint-store.h"
#include "sfl-clock.h"
#include "sfl-config.h"
#include "sfl-coordinator.h"
#include "sfl-curl-loop.h"
#include "sfl-membership.h"
#include "sfl-sf-auth.h"
#include "sfl-sf-rest.h"
#include "sfl-source.h"

G_BEGIN_DECLS

/*
 * The kind tables: one const record per checkpoint store, coordinator and source the
 * configuration can name. `run`, `check`, `doctor` and `state` look a kind up by its
 * configured name and use the record's hooks, so none of them names a concrete type or
 * switches on a kind; a new kind is its own folder plus one line in a table in app.c.
 */

/* a doctor row's verdict, in the order of the doctor's own statuses */
typedef enum {
	SFL_PROBE_PASS,
	SFL_PROBE_WARN,
	SFL_PROBE_FAIL,
	SFL_PROBE_SKIP,
} SflProbeStatus;

typedef void (*SflProbeAddFunc)(gpointer user_data, const gchar *name, SflProbeStatus status,
				const gchar *detail);

/*
 * What a doctor probe may use: the loaded configuration, the main context it waits on, the
 * daemon's curl loop and clock, and for source probes the org under check. A probe reports
 * one row or more through sfl_probe_env_add().
 */
typedef struct {
	const SflConfig *config;
	GMainContext *context;
	SflCurlLoop *loop;
	SflClock *clock;
	/* the org under check: set for source probes only */
	const SflSourcesConfig *sources;
	SflSfAuth *auth;
	const gchar *org_id;
	SflProbeAddFunc add;
	gpointer add_data;
} SflProbeEnv;

/* one asynchronous operation a probe waits for on its main context */
typedef struct {
	gboolean done;
	GAsyncResult *result;
} SflProbeOp;

void sfl_probe_op_cb(GObject *source, GAsyncResult *result, gpointer user_data);
void sfl_probe_op_wait(GMainContext *context, SflProbeOp *op);
void sfl_probe_op_clear(SflProbeOp *op);

/* @name: the row's name */
typedef void (*SflProbeFunc)(const SflProbeEnv *env, const gchar *name);

void sfl_probe_env_add(const SflProbeEnv *env, const gchar *name, SflProbeStatus status,
		       const gchar *format, ...) G_GNUC_PRINTF(4, 5);

/* coordinate.sharding: the configured kind's membership records listed, nothing written */
void sfl_probe_sharding(const SflProbeEnv *env, const gchar *name);

typedef struct {
	const gchar *name;    /* the state.store value */
	const gchar *section; /* where its settings live, e.g. "state.file" */
	/* @exclusive: hold the store's own lock, for the kinds that have one */
	SflCheckpointStore *(*build)(const SflConfig *config, gboolean exclusive, GError **error);
	/* where the document lives, for log lines and labels (never a credential) */
	gchar *(*dup_location)(const SflConfig *config);
	/* the store locks its document itself when no coordinator keeps a second instance away */
	gboolean self_locking;
	SflProbeFunc doctor_probe;
} SflStoreKind;

typedef struct {
	const gchar *name;    /* the coordinate.type value */
	const gchar *section; /* where its settings live, e.g. "coordinate.file_lease" */
	/* @loop: (nullable): the daemon's curl loop; @holder: the default identity */
	SflCoordinator *(*build)(const SflConfig *config, SflCurlLoop *loop, const gchar *holder,
				 GError **error);
	/* hands out epochs the store must fence with */
	gboolean fenced;
	/* `state` writes: FALSE with an SFL_ERROR_CONFLICT naming the live writer, or why it
	 * cannot be told offline */
	gboolean (*check_no_writer)(const SflConfig *config, GError **error);
	/* (nullable): `check` cannot build this coordinator here: the note it prints instead
	 * (NULL when it can) */
	const gchar *(*check_deferred)(const SflConfig *config);
	SflProbeFunc doctor_probe;
	/* (nullable, both or neither): coordinate.sharding on this kind: where the group's
	 * membership records live, and the lease of one work unit (@holder: this replica's) */
	SflMemberStore *(*build_members)(const SflConfig *config, SflCurlLoop *loop,
					 GError **error);
	SflCoordinator *(*build_unit_lease)(const SflConfig *config, SflCurlLoop *loop,
					    const gchar *holder, const gchar *unit, GError **error);
} SflCoordinatorKind;

/* what a source of one org is built from */
typedef struct {
	SflSfAuth *auth;
	SflSfRest *rest;
	const SflSourcesConfig *sources;
	const gchar *org_id; /* (nullable): the probe's answer */
	const gchar *salt;   /* sources.transform_salt, "" when unset */
	/* (nullable): a sharded work unit: build only what this unit (one of the kind's `units`)
	 * reads */
	const gchar *unit;
} SflSourceBuildArgs;

typedef struct {
	const gchar *name;    /* e.g. "pubsub" */
	const gchar *section; /* e.g. "sources.pubsub" */
	/* sources.<name>.enabled, whether or not it has anything to read (`doctor` lists it) */
	gboolean (*enabled)(const SflSourcesConfig *sources);
	/* enabled with something to read: built and started in every term */
	gboolean (*wanted)(const SflSourcesConfig *sources);
	/* offline, for `run` and `check`: NULL when it can produce, else why not (naming keys) */
	const gchar *(*idle_reason)(const SflSourcesConfig *sources);
	SflSource *(*build)(const SflSourceBuildArgs *args, GError **error);
	/* (nullable): the doctor's row for this source, when it has one */
	SflProbeFunc doctor_probe;
	/* claims the checkpoint keys the source writes and says what /statusz shows of them */
	SflCheckpointDescribeFunc describe_checkpoint;
	/* the work units of a wanted source (coordinate.sharding), each named by the checkpoint
	 * key it writes, without the org prefix: appended to @out (element-type utf8) */
	void (*units)(const SflSourcesConfig *sources, GPtrArray *out);
} SflSourceKind;

const SflStoreKind *sfl_store_kinds(guint *n_kinds);
const SflCoordinatorKind *sfl_coordinator_kinds(guint *n_kinds);
const SflSourceKind *sfl_source_kinds(guint *n_kinds);

const SflStoreKind *sfl_store_kind_lookup(const gchar *name, GError **error);
const SflCoordinatorKind *sfl_coordinator_kind_lookup(const gchar *name, GError **error);
const SflSourceKind *sfl_source_kind_lookup(const gchar *name, GError **error);

/* the configured kinds, looked up by the names the loader accepted */
const SflStoreKind *sfl_store_kind_for_config(const SflConfig *config, GError **error);
const SflCoordinatorKind *sfl_coordinator_kind_for_config(const SflConfig *config, GError **error);

G_END_DECLS
