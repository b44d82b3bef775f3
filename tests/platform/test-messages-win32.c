/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * sf2loki.exe carries the Event Log's message table (platform/win32/sfl-messages.mc): the
 * Event Viewer loads it from the exe the installer names as EventMessageFile and formats
 * event id 1 with the line the service reported. This does the same with FormatMessageW on
 * the built exe ($SF2LOKI_BIN). Plain C and TAP, run under wine.
 */

#include <windows.h>

#include <stdio.h>
#include <string.h>
#include <wchar.h>

/* the id platform/win32/sfl-service-win32.c reports every line with */
#define TEST_EVENT_ID 1

int
main(void)
{
	wchar_t exe[MAX_PATH];
	wchar_t out[256];
	const wchar_t *line = L"{\"level\":\"info\",\"event\":\"caf\u00e9 100% ready\"}";
	DWORD_PTR args[1] = { (DWORD_PTR)line };
	HMODULE module;
	DWORD n;
	int ok = 1;

	printf("1..1\n");
	if (GetEnvironmentVariableW(L"SF2LOKI_BIN", exe, MAX_PATH) == 0) {
		printf("not ok 1 - SF2LOKI_BIN is not set\n");
		return 1;
	}
	module = LoadLibraryExW(exe, NULL,
				LOAD_LIBRARY_AS_DATAFILE | LOAD_LIBRARY_AS_IMAGE_RESOURCE);
	if (module == NULL) {
		printf("# cannot load %ls: error %lu\n", exe, (unsigned long)GetLastError());
		ok = 0;
	} else {
		n = FormatMessageW(FORMAT_MESSAGE_FROM_HMODULE | FORMAT_MESSAGE_ARGUMENT_ARRAY,
				   module, TEST_EVENT_ID,
				   MAKELANGID(LANG_ENGLISH, SUBLANG_ENGLISH_US), out,
				   sizeof(out) / sizeof(out[0]), (va_list *)args);
		if (n == 0) {
			printf("# FormatMessageW: error %lu\n", (unsigned long)GetLastError());
			ok = 0;
		} else {
			/* the message is "%1" and a line break: the line comes back whole, '%' too
			 */
			while (n > 0 && (out[n - 1] == L'\n' || out[n - 1] == L'\r'))
				out[--n] = L'\0';
			if (wcscmp(out, line) != 0) {
				printf("# formatted as \"%ls\"\n", out);
				ok = 0;
			}
		}
		FreeLibrary(module);
	}
	printf("%s 1 - event id 1 of the exe's message table formats as the line itself\n",
	       ok ? "ok" : "not ok");
	return ok ? 0 : 1;
}
