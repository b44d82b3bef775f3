/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflLaneHandle"

#include "config.h"

#include "sfl-lane-handle.h"

G_DEFINE_INTERFACE(SflLaneHandle, sfl_lane_handle, G_TYPE_OBJECT)

static void
sfl_lane_handle_default_init(SflLaneHandleInterface *iface)
{
}

gboolean
sfl_lane_handle_offer(SflLaneHandle *self, SflEntry *entry)
{
	g_return_val_if_fail(SFL_IS_LANE_HANDLE(self), FALSE);
	g_return_val_if_fail(entry != NULL, FALSE);
	return SFL_LANE_HANDLE_GET_IFACE(self)->offer(self, entry);
}

gboolean
sfl_lane_handle_is_full(SflLaneHandle *self)
{
	g_return_val_if_fail(SFL_IS_LANE_HANDLE(self), TRUE);
	return SFL_LANE_HANDLE_GET_IFACE(self)->is_full(self);
}

gboolean
sfl_lane_handle_is_stopped(SflLaneHandle *self)
{
	g_return_val_if_fail(SFL_IS_LANE_HANDLE(self), TRUE);
	return SFL_LANE_HANDLE_GET_IFACE(self)->is_stopped(self);
}

void
sfl_lane_handle_add_writer(SflLaneHandle *self, GObject *writer, SflLaneWritableFunc func)
{
	g_return_if_fail(SFL_IS_LANE_HANDLE(self));
	g_return_if_fail(G_IS_OBJECT(writer) && func != NULL);
	SFL_LANE_HANDLE_GET_IFACE(self)->add_writer(self, writer, func);
}

void
sfl_lane_handle_remove_writer(SflLaneHandle *self, GObject *writer)
{
	g_return_if_fail(SFL_IS_LANE_HANDLE(self));
	SFL_LANE_HANDLE_GET_IFACE(self)->remove_writer(self, writer);
}
