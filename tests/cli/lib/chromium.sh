# shellcheck shell=bash
# chromium.sh - sourced by the browser tests (flame_browser.sh,
# report_browser.sh): find Debian's chromium and node, installing chromium
# with apt-get when it is absent and we run as root.
#
#   need_browser NAME    sets $chromium; without a browser or node: prints
#                        NAME: FAIL ... and exits 1, or with
#                        REC_SKIP_BROWSER=1 prints that it skipped and exits 0
find_chromium() { command -v chromium || command -v chromium-browser || true; }
need_browser() {
	local name=$1
	chromium=$(find_chromium)
	if [ -z "$chromium" ] && [ "${REC_SKIP_BROWSER:-0}" != 1 ]; then
		if [ "$(id -u)" = 0 ]; then
			echo "$name: installing Debian's chromium"
			(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >"/tmp/${name}_apt.log" 2>&1 ||
				tail -5 "/tmp/${name}_apt.log"
		fi
		chromium=$(find_chromium)
	fi
	if [ -z "$chromium" ]; then
		if [ "${REC_SKIP_BROWSER:-0}" = 1 ]; then
			echo "$name: no chromium; skipped (REC_SKIP_BROWSER=1)"
			exit 0
		fi
		echo "$name: FAIL: chromium is not installed and could not be installed (set REC_SKIP_BROWSER=1 to skip)"
		exit 1
	fi
	if ! command -v node >/dev/null; then
		[ "${REC_SKIP_BROWSER:-0}" = 1 ] && { echo "$name: no node; skipped"; exit 0; }
		echo "$name: FAIL: node is not installed"
		exit 1
	fi
}
