# Wisp's own attributes, in FreeRADIUS's dictionary format. Server-side check items only (numbered in
# FreeRADIUS's site-local range 3000-3999, so never sent in a packet): Wisp reads them from radcheck
# and radgroupcheck. deploy/freeradius/configure.sh adds this file to a FreeRADIUS raddb, so a
# FreeRADIUS reading the same database knows the names (it does not enforce them: Wisp does).
#
# Data quotas: octets in plus out (gigawords included) over the user's sessions that started in
# the current day, the current month (local time, as rlm_sqlcounter counts), or ever.
ATTRIBUTE	Wisp-Max-Daily-Octets		3212	integer64
ATTRIBUTE	Wisp-Max-Monthly-Octets		3213	integer64
ATTRIBUTE	Wisp-Max-All-Octets		3214	integer64
#
# Devices (src/core/devices): how many devices a user may add on the "my devices" page, set on the
# user or one of their groups (radcheck / radgroupcheck, Wisp-Max-Devices := 3).
ATTRIBUTE	Wisp-Max-Devices		3215	integer
