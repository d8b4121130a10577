# apt_install PACKAGE HINT: installs PACKAGE with apt (through sudo unless root); elsewhere than
# Linux calls `die HINT` (defined by the caller), which should say how to install it there.

apt_install() {
    local package="$1" hint="$2"
    [ "$(uname -s)" = "Linux" ] || die "$hint"
    echo "$(basename "$0"): installing $package" >&2
    local sudo_cmd=""
    [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "$package" >/dev/null
}
