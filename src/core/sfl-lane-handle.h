/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <glib-object.h>

#include "sfl-entry.h"

G_BEGIN_DECLS

/*
 * SflLaneHandle: what a source writes into (docs/architecture.md, "The seams"). The pipeline's
 * lanes implement it; a source sees nothing else of the pipeline.
 *
 * Contract
 *  - offer() queues an entry (its checkpoint rides on it) and references it, or refuses it
 *    while the lane is full, stopping or stopped; a refused entry stays the caller's.
 *  - A writer registered with add_writer() is called, in registration order, each time the
 *    lane drains under its budgets after refusing an offer; the lane calls it directly. A
 *    writer removes itself before it goes away; the lane holds a reference to it only for
 *    the length of a wake-up.
 *  - is_stopped(): the lane will take nothing again (a fatal sink result, a fenced commit).
 *
 * Threading: the main thread.
 */

#define SFL_TYPE_LANE_HANDLE (sfl_lane_handle_get_type())
G_DECLARE_INTERFACE(SflLaneHandle, sfl_lane_handle, SFL, LANE_HANDLE, GObject)

/* the lane has room again */
typedef void (*SflLaneWritableFunc)(GObject *writer);

struct _SflLaneHandleInterface {
	GTypeInterface parent_iface;

	gboolean (*offer)(SflLaneHandle *self, SflEntry *entry);
	gboolean (*is_full)(SflLaneHandle *self);
	gboolean (*is_stopped)(SflLaneHandle *self);
	void (*add_writer)(SflLaneHandle *self, GObject *writer, SflLaneWritableFunc func);
	void (*remove_writer)(SflLaneHandle *self, GObject *writer);
};

/* TRUE: taken (referenced); FALSE: refused, @entry is still the caller's */
gboolean sfl_lane_handle_offer(SflLaneHandle *self, SflEntry *entry);
gboolean sfl_lane_handle_is_full(SflLaneHandle *self);
gboolean sfl_lane_handle_is_stopped(SflLaneHandle *self);
void sfl_lane_handle_add_writer(SflLaneHandle *self, GObject *writer, SflLaneWritableFunc func);
void sfl_lane_handle_remove_writer(SflLaneHandle *self, GObject *writer);

G_END_DECLS
