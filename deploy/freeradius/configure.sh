#!/usr/bin/env bash
# Turns a copy of Debian's FreeRADIUS 3.2 configuration into one that serves a Wisp SQLite
# database through rlm_sql. Usage:
#   configure.sh <raddb-dir> <wisp.db> [auth-port] [acct-port] [listen-address] [--lab]
# <raddb-dir> is a copy of /etc/freeradius/3.0 (cp -r /etc/freeradius/3.0 <raddb-dir>).
# --lab: a private lab (tests, benchmarks): no privilege drop, no reject delay, logs and pid in <raddb>/..,
# and no clients from clients.conf (only the networks in the nas table).
# WPA-Enterprise (PEAP, EAP-TTLS, EAP-TLS) is enabled when EAP_CERT_FILE is set, with the same
# variables as Wisp's own server: EAP_CERT_FILE (server certificate, PEM, chain after it),
# EAP_KEY_FILE (its unencrypted key), EAP_CA_FILE (CA of client certificates), and optionally
# EAP_FRAGMENT_SIZE (1024), EAP_DEFAULT_METHOD (peap|ttls|tls, default peap), EAP_TLS_MAX_VERSION
# (1.2; "1.3" lets supplicants that ask for it use TLS 1.3).
set -euo pipefail
raddb=${1:?raddb directory}
database=${2:?path of the Wisp SQLite database}
auth_port=${3:-1812}
acct_port=${4:-1813}
listen=${5:-*}
lab=${6:-}
here=$(cd "$(dirname "$0")" && pwd)
state=$(cd "$raddb/.." && pwd)

# The Wisp site replaces the stock ones (their listeners would take the same ports).
sed -e "s|@AUTH_PORT@|$auth_port|; s|@ACCT_PORT@|$acct_port|; s|@LISTEN_ADDR@|$listen|" \
  "$here/wisp-site" > "$raddb/sites-available/wisp"
rm -f "$raddb/sites-enabled/default" "$raddb/sites-enabled/inner-tunnel"
rm -f "$raddb/mods-enabled/eap" "$raddb/sites-enabled/wisp-inner"
if [ -n "${EAP_CERT_FILE:-}" ]; then
  for file in "$EAP_CERT_FILE" "${EAP_KEY_FILE:?EAP_KEY_FILE is required with EAP_CERT_FILE}" \
    "${EAP_CA_FILE:?EAP_CA_FILE is required with EAP_CERT_FILE}"; do
    [ -r "$file" ] || { echo "configure.sh: cannot read $file" >&2; exit 1; }
  done
  method=$(printf '%s' "${EAP_DEFAULT_METHOD:-peap}" | tr 'A-Z' 'a-z')
  case "$method" in peap | ttls | tls) ;; *) echo "configure.sh: EAP_DEFAULT_METHOD must be peap, ttls or tls" >&2; exit 1 ;; esac
  sed -e "s|@DEFAULT_EAP_TYPE@|$method|; s|@CERT_FILE@|$EAP_CERT_FILE|; s|@KEY_FILE@|$EAP_KEY_FILE|" \
    -e "s|@CA_FILE@|$EAP_CA_FILE|; s|@FRAGMENT_SIZE@|${EAP_FRAGMENT_SIZE:-1024}|" \
    -e "s|@TLS_MAX_VERSION@|${EAP_TLS_MAX_VERSION:-1.2}|" \
    "$here/eap.conf" > "$raddb/mods-available/eap"
  ln -sf ../mods-available/eap "$raddb/mods-enabled/eap"
  cp "$here/wisp-inner-site" "$raddb/sites-available/wisp-inner"
  ln -sf ../sites-available/wisp-inner "$raddb/sites-enabled/wisp-inner"
  sed -i 's|^#@EAP@||' "$raddb/sites-available/wisp"
fi
ln -sf ../sites-available/wisp "$raddb/sites-enabled/wisp"

# rlm_sql on the Wisp database: WAL (set by Wisp) and a busy timeout that survives concurrent
# writers; networks are read from the nas table at start.
sed -i \
  -e 's|^\(\s*\)driver = "rlm_sql_null"|\1driver = "rlm_sql_sqlite"|' \
  -e 's|^\(\s*\)dialect = "[a-z]*"|\1dialect = "sqlite"|' \
  -e "s|^\(\s*\)filename = \"/tmp/freeradius.db\"|\1filename = \"$database\"|" \
  -e 's|^\(\s*\)busy_timeout = 200|\1busy_timeout = 5000|' \
  -e 's|^\(\s*\)bootstrap = |\1#bootstrap = |' \
  -e 's|^\(\s*\)#\s*read_clients = yes|\1read_clients = yes|' \
  "$raddb/mods-available/sql"
ln -sf ../mods-available/sql "$raddb/mods-enabled/sql"
ln -sf ../mods-available/sqlcounter "$raddb/mods-enabled/sqlcounter"

# Never store the password tried: the stock post-auth query writes it into radpostauth.pass.
sed -i "s|'%{%{User-Password}:-%{Chap-Password}}'|''|" "$raddb/mods-config/sql/main/sqlite/queries.conf"

# Wisp's users can be disabled: the check query adds Auth-Type := Reject for them, so FreeRADIUS
# rejects them as Wisp's own server does.
WISP_CHECK_QUERY=$(cat <<'QUERY'
authorize_check_query = "\
	SELECT id, username, attribute, value, op \
	FROM ${authcheck_table} \
	WHERE username = '%{SQL-User-Name}' \
	UNION ALL SELECT 0, username, 'Auth-Type', 'Reject', ':=' FROM users \
	WHERE username = '%{SQL-User-Name}' AND status = 'disabled' \
	ORDER BY id"
QUERY
)
export WISP_CHECK_QUERY
perl -0pi -e 's/^authorize_check_query = ".*?ORDER BY id"/$ENV{WISP_CHECK_QUERY}/sm' \
  "$raddb/mods-config/sql/main/sqlite/queries.conf"
grep -q "status = 'disabled'" "$raddb/mods-config/sql/main/sqlite/queries.conf" ||
  { echo "configure.sh: could not extend authorize_check_query" >&2; exit 1; }

# FreeRADIUS 3.2.1's SQLite simul_verify_query looks sessions up by '%{SQL-Group}' (empty there)
# instead of the user name, so it "verifies" every open session away and Simultaneous-Use is never
# enforced. Look them up by user name, as the other dialects do.
sed -i "s|WHERE username = '%{\${group_attribute}}'|WHERE username = '%{SQL-User-Name}'|" \
  "$raddb/mods-config/sql/main/sqlite/queries.conf"

# The stock SQLite expire_on_login query uses GREATEST() and NOW(), which SQLite does not have,
# and FreeRADIUS's SQLite accounting stores start times as Unix seconds.
cat > "$raddb/mods-config/sql/counter/sqlite/expire_on_login.conf" <<'SQL'
query = "\
	SELECT IFNULL(MAX(CAST(strftime('%%s', 'now') AS INTEGER) - acctstarttime), 0) \
	FROM radacct \
	WHERE username = '%{${key}}'"
SQL

# The daily and monthly counters (Max-Daily-Session, Max-Monthly-Session): the stock SQLite queries
# use GREATEST() and strftime() over a text start time; SQLite has neither that function nor text
# times here (FreeRADIUS's SQLite accounting and Wisp store Unix seconds).
for counter in dailycounter monthlycounter; do
  cat > "$raddb/mods-config/sql/counter/sqlite/$counter.conf" <<'SQL'
query = "\
	SELECT SUM(acctsessiontime - MAX(%%b - acctstarttime, 0)) \
	FROM radacct \
	WHERE username = '%{${key}}' \
	AND acctstarttime + acctsessiontime > %%b"
SQL
done

# Wisp's own check items (data quotas, src/core/aaa/dictionary.wisp): FreeRADIUS must know their
# names, or a user with one is rejected outright. It leaves them to Wisp.
cp "$here/../../src/core/aaa/dictionary.wisp" "$raddb/dictionary.wisp"
grep -q "dictionary.wisp" "$raddb/dictionary" || printf '$INCLUDE dictionary.wisp\n' >> "$raddb/dictionary"

# Sessions stay in their account (issue 12). acctuniqueid is a hash of the session's own
# attributes, so two accounts whose access points send the same ones (the same private
# NAS-IP-Address, NAS-Identifier, session ids) share it, and the stock queries, matching on it
# alone, let one account's packets update the other's sessions (and an Accounting-On close them).
# Each client's short name ends with its network's account and id (client_query), the wisp site
# copies them into control:Wisp-Account-Id / Wisp-Network-Id and hashes the account into
# Acct-Unique-Session-Id (as Wisp's own server does), and the accounting queries write them and
# match sessions within the account. A client that is no Wisp network (clients.conf) has
# no account: its sessions are written and matched as rows without one, as the stock queries do.
grep -q "Wisp-Account-Id" "$raddb/dictionary" || cat >> "$raddb/dictionary" <<'DICT'
# Wisp (deploy/freeradius/configure.sh): the account and network of the client; server-side only.
ATTRIBUTE	Wisp-Account-Id		3210	integer
ATTRIBUTE	Wisp-Network-Id		3211	integer
DICT
perl -0pi -e '
  my $account = q{%{%{control:Wisp-Account-Id}:-NULL}};
  my $network = q{%{%{control:Wisp-Network-Id}:-NULL}};
  my %made;
  $made{client_query} = s{SELECT id, nasname, shortname, type}
    {SELECT id, nasname, shortname || \x27 (account \x27 || account_id || \x27, network \x27 || id || \x27)\x27, type}g;
  $made{column_list} = s{(\tdelegatedipv6prefix) \\\n(\s*\$\{\.\.class\.column_name\})}
    {$1, account_id, network_id \\\n$2}g;
  $made{inserts} = s{(\x27%\{Delegated-IPv6-Prefix\}\x27) \\\n(\s*\$\{\.\.\.\.class\.packet_xlat\}\))}
    {$1, $account, $network \\\n$2}g;
  $made{updates} = s{(WHERE AcctUniqueId = \x27%\{Acct-Unique-Session-Id\}\x27)"}
    {$1 AND account_id IS $account"}g;
  $made{accounting_on} = s{(AND acctstarttime <= \$\{\.\.\.\.event_timestamp\})"}
    {$1 AND account_id IS $account"}g;
  my %want = (client_query => 1, column_list => 1, inserts => 3, updates => 3, accounting_on => 1);
  for (sort keys %want) {
    die "configure.sh: $_: expected $want{$_} change(s) in queries.conf, made " . ($made{$_} || 0) . "\n"
      if ($made{$_} || 0) != $want{$_};
  }
' "$raddb/mods-config/sql/main/sqlite/queries.conf"

sed -i -e 's|^proxy_requests\s*=.*|proxy_requests = no|' "$raddb/radiusd.conf"
if [ "$lab" = "--lab" ]; then
  printf "# clients come from the nas table (Wisp networks)\n" > "$raddb/clients.conf"
  mkdir -p "$state/log" "$state/run"
  sed -i \
    -e "s|^logdir = .*|logdir = $state/log|" \
    -e "s|^run_dir = .*|run_dir = $state/run|" \
    -e 's|^\(\s*\)user = freerad|\1#user = freerad|' \
    -e 's|^\(\s*\)group = freerad|\1#group = freerad|' \
    -e 's|^\(\s*\)reject_delay = 1$|\1reject_delay = 0|' \
    "$raddb/radiusd.conf"
fi
chmod -R a+rX "$raddb"
