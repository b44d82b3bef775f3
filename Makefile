# Thin front for meson. `make run` and `make test` install dependencies and build as needed.

BUILD_DIR ?= build
TEST_BUILD_DIR ?= build-asan
FUZZ_BUILD_DIR ?= build-fuzz
# sanitizers are on for `make test` unless SANITIZE=0
SANITIZE ?= 1
WERROR ?= false
FUZZ_SECONDS ?= 60
MESON ?= meson

CLANG_FORMAT ?= clang-format
FORMAT_FILES = $(shell git ls-files '*.c' '*.h' 2>/dev/null)

ifeq ($(SANITIZE),1)
TEST_SETUP_ARGS = -Db_sanitize=address,undefined -Db_lundef=false
else
TEST_BUILD_DIR = $(BUILD_DIR)
TEST_SETUP_ARGS =
endif

.PHONY: all deps build run test bench fuzz coverage format format-check clean distclean \
	deb rpm package-test ha-test soak bench-pubsub bench-elf-e2e bench-backfill win-deps win-build win-test bench-win win-e2e \
	ha-test-win msi msi-test gen-config image-deps image image-test

all: build

deps:
	@if [ "$$(id -u)" -eq 0 ] || command -v sudo >/dev/null; then \
		sh scripts/install-deps.sh; \
	else \
		echo "make deps: run scripts/install-deps.sh as root" >&2; exit 1; \
	fi

$(BUILD_DIR)/build.ninja:
	$(MAKE) deps
	$(MESON) setup $(BUILD_DIR) -Dwerror=$(WERROR)

build: $(BUILD_DIR)/build.ninja
	$(MESON) compile -C $(BUILD_DIR)

run: build
	sh scripts/run-dev.sh $(BUILD_DIR)/sf2loki

$(TEST_BUILD_DIR)/.configured:
	$(MAKE) deps
	$(MESON) setup $(TEST_BUILD_DIR) -Dwerror=$(WERROR) $(TEST_SETUP_ARGS) --reconfigure 2>/dev/null || \
		$(MESON) setup $(TEST_BUILD_DIR) -Dwerror=$(WERROR) $(TEST_SETUP_ARGS)
	touch $@

test: $(TEST_BUILD_DIR)/.configured
	$(MESON) compile -C $(TEST_BUILD_DIR)
	$(MESON) test -C $(TEST_BUILD_DIR) --print-errorlogs --num-processes 2
	@sh scripts/test-summary.sh $(TEST_BUILD_DIR)
	$(MAKE) --no-print-directory ha-test
	@if command -v dpkg-buildpackage >/dev/null && command -v dh >/dev/null; then \
		$(MAKE) --no-print-directory package-test; \
	else \
		echo "package-test: SKIP (dpkg-buildpackage or debhelper missing; run make deps)"; \
	fi

bench: build
	$(MESON) compile -C $(BUILD_DIR) bench-config bench-sink-encode bench-pipeline bench-elf bench-metrics \
		bench-avro bench-shard bench-shard-sim bench-deadletter
	$(MESON) test -C $(BUILD_DIR) --benchmark --verbose

# Pub/Sub end to end (bench/pubsub_e2e.py): simulators -> sf2loki run -> Loki simulator for
# MINUTES (10 here unless given; the soak's default is 30); numbers go to docs/performance.md
bench-pubsub: $(BUILD_DIR)/build.ninja
	$(MESON) compile -C $(BUILD_DIR) sf2loki
	nice /usr/bin/python3 bench/pubsub_e2e.py --bin $(BUILD_DIR)/sf2loki \
		--minutes $(if $(filter command line environment,$(origin MINUTES)),$(MINUTES),10)

# EventLogFile end to end through the real binary (bench/elf_e2e.py): sizes 10 k to 2.72 M rows
# and 1/4/16 event types at once, medians of ROUNDS (3), each next to a curl download floor
bench-elf-e2e: $(BUILD_DIR)/build.ninja
	$(MESON) compile -C $(BUILD_DIR) sf2loki
	nice /usr/bin/python3 bench/elf_e2e.py --bin $(BUILD_DIR)/sf2loki \
		--rounds $(if $(ROUNDS),$(ROUNDS),3)

# `sf2loki backfill`'s peak RSS (bench/backfill_rss.py): one 1 GiB file, then 50 files over five
# types; the numbers go to docs/performance.md ("Backfill"). Not part of `make test`.
bench-backfill: $(BUILD_DIR)/build.ninja
	$(MESON) compile -C $(BUILD_DIR) sf2loki
	nice /usr/bin/python3 bench/backfill_rss.py --bin $(BUILD_DIR)/sf2loki

# libFuzzer targets (tests/fuzz/README.md), FUZZ_SECONDS each from their seed corpora, under
# ASan+UBSan; only the fuzz targets are built. A finding fails the run and is named with its
# input. FUZZ_TARGETS picks some; FUZZ_WORK_DIR (default .fuzz) holds the growing corpus.
FUZZ_TARGETS ?= $(patsubst tests/fuzz/fuzz-%.c,%,$(wildcard tests/fuzz/fuzz-*.c))

fuzz:
	$(MAKE) deps
	@[ -f $(FUZZ_BUILD_DIR)/build.ninja ] || CC=clang $(MESON) setup $(FUZZ_BUILD_DIR) \
		-Dfuzzing=true -Db_sanitize=address,undefined -Db_lundef=false -Dwerror=$(WERROR)
	$(MESON) compile -C $(FUZZ_BUILD_DIR) $(addprefix fuzz-,$(FUZZ_TARGETS))
	sh scripts/run-fuzz.sh $(FUZZ_BUILD_DIR) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# HA fault injection (tests/ha/README.md): three replicas sharing a lease and a store, a seeded
# fault schedule, invariant checkers. ha-test is the short fixed-seed run that `make test`
# includes (with the sanitizer build's binary under SANITIZE=1): file_lease for HA_SECONDS, then
# one round of every fault for each other coordinator; then the sharded mode (--sharded: every
# replica runs its share of the work units, a fourth joins and leaves) for HA_SHARDED_SECONDS
# on each of HA_SHARDED_COORDINATORS (a coordinator this build cannot shard with is a SKIP).
# soak writes docs/reliability.md; `make soak SHARDED=1` docs/reliability-sharded-<coordinator>.md.
HA_SEED ?= 1
HA_SECONDS ?= 45
HA_OTHER_SECONDS ?= 20
HA_COORDINATORS ?= file_lease k8s_lease s3_lease gcs_lease
HA_SHARDED_SECONDS ?= 40
HA_SHARDED_COORDINATORS ?= file_lease k8s_lease s3_lease gcs_lease
SEED ?= 1
MINUTES ?= 30
COORDINATOR ?= file_lease
SHARDED ?=

# exit 77: a simulator's Debian module is missing (make deps installs them)
ha-test: $(TEST_BUILD_DIR)/.configured
	$(MESON) compile -C $(TEST_BUILD_DIR) sf2loki
	@for c in $(HA_COORDINATORS); do \
		secs=$(HA_OTHER_SECONDS); [ $$c = file_lease ] && secs=$(HA_SECONDS); \
		rc=0; LSAN_OPTIONS=$${LSAN_OPTIONS:-suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0} \
			/usr/bin/python3 tests/ha/ha_harness.py --bin $(TEST_BUILD_DIR)/sf2loki \
			--coordinator $$c --seed $(HA_SEED) --duration $$secs \
			--command "make ha-test ($$c)" || rc=$$?; \
		if [ $$rc -eq 77 ]; then echo "ha-test $$c: SKIP"; \
		elif [ $$rc -ne 0 ]; then echo "ha-test $$c: FAIL"; exit $$rc; \
		else echo "ha-test $$c: PASS"; fi; \
	done
	@for c in $(HA_SHARDED_COORDINATORS); do \
		rc=0; LSAN_OPTIONS=$${LSAN_OPTIONS:-suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0} \
			/usr/bin/python3 tests/ha/ha_harness.py --bin $(TEST_BUILD_DIR)/sf2loki --sharded \
			--coordinator $$c --seed $(HA_SEED) --duration $(HA_SHARDED_SECONDS) \
			--command "make ha-test (sharded, $$c)" || rc=$$?; \
		if [ $$rc -eq 77 ]; then echo "ha-test sharded $$c: SKIP"; \
		elif [ $$rc -ne 0 ]; then echo "ha-test sharded $$c: FAIL"; exit $$rc; \
		else echo "ha-test sharded $$c: PASS"; fi; \
	done

soak: build
	nice /usr/bin/python3 tests/ha/ha_harness.py --bin $(BUILD_DIR)/sf2loki --seed $(SEED) \
		--coordinator $(COORDINATOR) --duration $$(( $(MINUTES) * 60 )) --burst-max 8 \
		$(if $(SHARDED),--sharded) \
		--report $(if $(SHARDED),docs/reliability-sharded-$(COORDINATOR).md,$(if $(filter file_lease,$(COORDINATOR)),docs/reliability.md,docs/reliability-$(COORDINATOR).md)) \
		--command "make soak SEED=$(SEED) MINUTES=$(MINUTES)$(if $(SHARDED), SHARDED=1)$(if $(and $(filter file_lease,$(COORDINATOR)),$(if $(SHARDED),,x)),, COORDINATOR=$(COORDINATOR))"

# The Windows build (docs/deployment/windows.md): cross-built with mingw-w64 against a prefix
# of Debian 12 source packages outside the clone (SF2LOKI_WIN_DEPS), tested under wine.
# win-deps installs the host packages and builds the prefix (a no-op when it is up to date);
# win-build leaves sf2loki.exe and every DLL it needs in $(WIN_BUILD_DIR)/dist; win-test runs
# the suites that are not about POSIX processes through meson's exe_wrapper (wine).
SF2LOKI_WIN_DEPS ?= /var/cache/sf2loki-win
WIN_BUILD_DIR ?= build-win
WIN_CROSS_FILE = $(SF2LOKI_WIN_DEPS)/cross-mingw64.txt
export SF2LOKI_WIN_DEPS

win-deps:
	@if [ "$$(id -u)" -eq 0 ] || command -v sudo >/dev/null; then \
		sh scripts/install-deps.sh --windows; \
	else \
		echo "make win-deps: run scripts/install-deps.sh --windows as root" >&2; exit 1; \
	fi
	nice sh scripts/build-win-deps.sh

$(WIN_BUILD_DIR)/build.ninja: $(WIN_CROSS_FILE)
	$(MESON) setup $(WIN_BUILD_DIR) --cross-file $(WIN_CROSS_FILE) -Dwerror=true --reconfigure \
		2>/dev/null || $(MESON) setup $(WIN_BUILD_DIR) --cross-file $(WIN_CROSS_FILE) -Dwerror=true

$(WIN_CROSS_FILE):
	$(MAKE) --no-print-directory win-deps

# a Windows build's dist/: sf2loki.exe, the DLLs it loads, and the compiled GSettings schema
# under share/glib-2.0/schemas, where GLib's default schema source looks next to the exe (the
# MSI installs it there too; docs/configuration.md)
define win_dist
	sh scripts/win-collect-dlls.sh $(1)/sf2loki.exe $(1)/dist \
		$(SF2LOKI_WIN_DEPS)/prefix/bin /usr/x86_64-w64-mingw32/lib
	mkdir -p $(1)/dist/share/glib-2.0/schemas
	cp data/org.sf2loki.gschema.xml $(1)/data/gschemas.compiled $(1)/dist/share/glib-2.0/schemas/
endef

win-build: win-deps $(WIN_BUILD_DIR)/build.ninja
	$(MESON) compile -C $(WIN_BUILD_DIR) sf2loki gschemas.compiled
	$(call win_dist,$(WIN_BUILD_DIR))
	$(SF2LOKI_WIN_DEPS)/wine-run $(WIN_BUILD_DIR)/dist/sf2loki.exe version

# EventLogFile throughput of sf2loki.exe under wine next to the native build
# (bench/win-elf-throughput.py): ROWS rows (1,000,000), ROUNDS rounds of native then wine
bench-win: $(BUILD_DIR)/build.ninja $(WIN_BUILD_DIR)/build.ninja
	$(MESON) compile -C $(BUILD_DIR) sf2loki
	$(MESON) compile -C $(WIN_BUILD_DIR) sf2loki gschemas.compiled
	$(call win_dist,$(WIN_BUILD_DIR))
	nice /usr/bin/python3 bench/win-elf-throughput.py --bin $(BUILD_DIR)/sf2loki \
		--exe $(WIN_BUILD_DIR)/dist/sf2loki.exe --rows $(or $(ROWS),1000000) \
		--rounds $(or $(ROUNDS),2)

# A test that happened to start or end a wine session (the wineserver and wine's own services)
# sometimes hung after its last line, until meson's timeout (about 1 run in 75). The session is
# started first, detached from any pipe, and kept for 120 s after its last program; that ends
# it on its own, so nothing is killed under another user of the same prefix.
win-test: win-build
	$(MESON) compile -C $(WIN_BUILD_DIR)
	-WINEPREFIX=$(SF2LOKI_WIN_DEPS)/wine wineserver -p120 </dev/null >/dev/null 2>&1
	$(SF2LOKI_WIN_DEPS)/wine-run cmd /c exit </dev/null >/dev/null 2>&1
	$(MESON) test -C $(WIN_BUILD_DIR) --print-errorlogs --num-processes 2
	@sh scripts/test-summary.sh $(WIN_BUILD_DIR)

# the HA harness against sf2loki.exe under wine (tests/ha/README.md): three replicas on one
# file_lease and file store (LockFileEx), forced kills through taskkill /F, Loki 5xx/429 and
# every other fault of the native run, for HA_WIN_SECONDS of faults (~2.5 min wall on 2 cores)
HA_WIN_SECONDS ?= 120

ha-test-win: win-build
	@rc=0; nice /usr/bin/python3 tests/ha/ha_harness.py --bin $(WIN_BUILD_DIR)/dist/sf2loki.exe \
		--coordinator file_lease --seed $(HA_SEED) --duration $(HA_WIN_SECONDS) \
		--command "make ha-test-win" || rc=$$?; \
	if [ $$rc -eq 77 ]; then echo "ha-test-win file_lease: SKIP"; \
	elif [ $$rc -ne 0 ]; then echo "ha-test-win file_lease: FAIL"; exit $$rc; \
	else echo "ha-test-win file_lease: PASS"; fi

# the end-to-end scenarios of sf2loki.exe under wine against the simulators
# (scripts/win-e2e.py: check/version parity with the native build, a hostile-quoting
# EventLogFile, Loki faults with a kill and restart, a Pub/Sub stream, the 100,000-row stall
# check); WIN_E2E picks some, e.g. WIN_E2E=pubsub,parity
WIN_E2E ?=
win-e2e: win-build build
	nice /usr/bin/python3 scripts/win-e2e.py --exe $(WIN_BUILD_DIR)/dist/sf2loki.exe \
		--native $(BUILD_DIR)/sf2loki $(if $(WIN_E2E),--only $(WIN_E2E))

# the Windows MSI (docs/deployment/windows.md#installing-with-the-msi): wixl over win-build's
# dist/ into $(WIN_BUILD_DIR)/sf2loki-<version>-x64.msi (packaging/msi/build-msi.py); VERSION
# sets its ProductVersion alone; MSI_SIGN_CERT and MSI_SIGN_KEY (PEM files) sign sf2loki.exe,
# the installer's helper and the .msi with osslsigncode
MSI_VERSION = $(or $(VERSION),$(shell sed -n "s/^  version: '\([^']*\)',.*/\1/p" meson.build | head -n 1))
msi: win-build
	$(MESON) compile -C $(WIN_BUILD_DIR) sfl-msi-action
	/usr/bin/python3 packaging/msi/build-msi.py --build-dir $(WIN_BUILD_DIR) \
		--out $(WIN_BUILD_DIR)/sf2loki-$(MSI_VERSION)-x64.msi $(if $(VERSION),--version $(VERSION)) \
		$(if $(MSI_SIGN_CERT),--sign-cert $(MSI_SIGN_CERT) --sign-key $(MSI_SIGN_KEY))

# install, run, net stop, upgrade and uninstall of the MSI under wine in a fresh prefix
# (scripts/msi-test.py); the upgrade installs a second build of the same sources, made in
# $(WIN_BUILD_DIR)-msi-next with the next patch version and signed with a throwaway certificate
MSI_NEXT_DIR = $(WIN_BUILD_DIR)-msi-next
MSI_NEXT_VERSION = $(shell echo $(MSI_VERSION) | awk -F. '{ printf "%d.%d.%d", $$1, $$2, $$3 + 1 }')
msi-test: msi
	$(MESON) compile -C $(WIN_BUILD_DIR) sfl-svc-query
	$(MESON) setup $(MSI_NEXT_DIR) --cross-file $(WIN_CROSS_FILE) -Dwerror=true -Dtests=false \
		-Dpackage_version=$(MSI_NEXT_VERSION) --reconfigure 2>/dev/null || \
		$(MESON) setup $(MSI_NEXT_DIR) --cross-file $(WIN_CROSS_FILE) -Dwerror=true \
		-Dtests=false -Dpackage_version=$(MSI_NEXT_VERSION)
	$(MESON) compile -C $(MSI_NEXT_DIR) sf2loki sfl-msi-action gschemas.compiled
	$(call win_dist,$(MSI_NEXT_DIR))
	nice /usr/bin/python3 scripts/msi-test.py --msi $(WIN_BUILD_DIR)/sf2loki-$(MSI_VERSION)-x64.msi \
		--next-build-dir $(MSI_NEXT_DIR) --query $(WIN_BUILD_DIR)/tests/win32/sfl-svc-query.exe

COV_BUILD_DIR ?= build-cov

# line coverage of the unit and integration suites; src/coordinate/ must stay at 95 % or more
coverage:
	$(MAKE) deps
	@[ -f $(COV_BUILD_DIR)/build.ninja ] || $(MESON) setup $(COV_BUILD_DIR) -Db_coverage=true
	$(MESON) compile -C $(COV_BUILD_DIR)
	$(MESON) test -C $(COV_BUILD_DIR) --suite unit --suite integration --num-processes 2
	sh scripts/coverage.sh $(COV_BUILD_DIR)

# native packages under build-pkg/ (docs/deployment/packages.md); package-test installs the
# deb on this machine when run as root, so run it on throwaway machines only (CI does)
deb:
	sh packaging/build-deb.sh

rpm:
	sh packaging/build-rpm.sh

package-test:
	sh packaging/package-test.sh

# the OCI image (docs/deployment/container.md): a Debian 12 rootfs from the archive with
# mmdebstrap, our deb in it, an image from that with buildah (no registry base image), named as
# the Helm chart's default image. Root and the network; about a minute, plus `make deb`.
# image-test inspects it against the chart and runs it with podman against the simulators.
image-deps:
	@if [ "$$(id -u)" -eq 0 ] || command -v sudo >/dev/null; then \
		sh scripts/install-deps.sh --image; \
	else \
		echo "make image-deps: run scripts/install-deps.sh --image as root" >&2; exit 1; \
	fi

image:
	sh packaging/image/build-image.sh

image-test:
	/usr/bin/python3 packaging/image/image_test.py $(CURDIR) $${PKG_BUILD_DIR:-build-pkg}/image

# the files rendered from the configuration tables (a unit test fails while one differs)
gen-config: build
	sh scripts/gen-config.sh $(BUILD_DIR)/sf2loki

format:
	$(CLANG_FORMAT) -i $(FORMAT_FILES)

format-check:
	$(CLANG_FORMAT) --dry-run --Werror $(FORMAT_FILES)

clean:
	rm -rf $(BUILD_DIR) build-asan build-cov $(FUZZ_BUILD_DIR) build-pkg

distclean: clean
	rm -rf .fuzz
