#!/usr/bin/env bash
# mutate.sh: the mutation pass of docs/mutation.md. Each mutant breaks one
# rule in the smallest way (a sed on one production file), runs the tests
# named for it, records whether one failed ("killed") or none did
# ("SURVIVED"), and puts the file back as it was, whatever happens.
#
#   scripts/mutate.sh            every mutant
#   scripts/mutate.sh gate-owner  the mutants whose name contains an argument
#
# Exit status 1 when a mutant survives or a mutation no longer applies (the
# code moved: update its sed here and the table in docs/mutation.md).
set -u
cd "$(dirname "$0")/.."
export GOTOOLCHAIN=local
export PURSER_TEST_DATABASE_URL="${PURSER_TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}"
GO="${GO:-go}"

backup=""
file=""
restore() {
	if [ -n "$backup" ] && [ -f "$backup" ]; then
		cp "$backup" "$file"
		rm -f "$backup"
		backup=""
	fi
}
trap 'restore; exit 130' INT TERM
trap restore EXIT

failed=0
results=()

# mutant NAME FILE SED PACKAGE RUN [KNOWN]: KNOWN says why the mutant is
# expected to survive (reported, but not a failure of the pass).
mutant() {
	local name="$1" f="$2" expr="$3" pkg="$4" run="${MUTATE_RUN:-$5}" known="${6:-}"
	if [ "${#FILTERS[@]}" -gt 0 ]; then
		local hit=0
		for want in "${FILTERS[@]}"; do
			case "$name" in *"$want"*) hit=1 ;; esac
		done
		[ "$hit" = 1 ] || return 0
	fi
	file="$f"
	backup="$(mktemp)"
	cp "$f" "$backup"
	sed -i -e "$expr" "$f"
	if cmp -s "$f" "$backup"; then
		restore
		echo "mutate: $name: the sed no longer changes $f" >&2
		results+=("$name	NOT APPLIED	$f")
		failed=1
		return
	fi
	local line
	line="$(diff "$backup" "$f" | sed -n 's/^\([0-9]*\).*/\1/p' | head -1)"
	echo "== $name ($f:$line) → go test -run '$run' $pkg" >&2
	local out status
	out="$("$GO" test -count=1 -timeout 10m -run "$run" "$pkg" 2>&1)"
	status=$?
	restore
	if [ "$status" -ne 0 ]; then
		local by
		by="$(printf '%s\n' "$out" | sed -n 's/^ *--- FAIL: \([^ /]*\) .*/\1/p' | sort -u | tr '\n' ' ')"
		if [ -z "$by" ]; then
			by="(build or package failure: $(printf '%s\n' "$out" | grep -m1 -v '^\(ok\|FAIL\)' | cut -c1-120))"
		fi
		results+=("$name	killed	$f:$line	$by")
	elif [ -n "$known" ]; then
		results+=("$name	survived (known)	$f:$line	$known")
	else
		results+=("$name	SURVIVED	$f:$line")
		failed=1
	fi
}

FILTERS=("$@")

# --- Confirmation gate: a mutation runs only for an approved proposal of the
# caller, in the same conversation, for the same tool, executed once.
mutant gate-owner services/toolrunner/runner.go \
	's/if p.UserID != req.UserID || p.ConversationID/if p.ConversationID/' \
	./services/toolrunner 'TestProposalMustMatchTheCall|TestConfirmationGate'
mutant gate-conversation services/toolrunner/runner.go \
	's/ || p.ConversationID != req.ConversationID//' \
	./services/toolrunner 'TestProposalMustMatchTheCall|TestConfirmationGate'
mutant gate-tool services/toolrunner/runner.go \
	's/ || p.Tool != req.Tool//' \
	./services/toolrunner 'TestProposalMustMatchTheCall|TestConfirmationGate'
mutant gate-status services/toolrunner/runner.go \
	's/^\tcase "approved":$/\tcase "approved", "pending", "rejected", "expired":/' \
	./services/toolrunner 'TestMutationNeedsAnApprovedProposal|TestProposalMustMatchTheCall|TestConfirmationGate'
mutant gate-race internal/store/proposals.go \
	's/WHERE tenant_id = ? AND id = ? AND status = ?`,/WHERE tenant_id = ? AND id = ? AND (status = ? OR 1 = 1)`,/' \
	./services/toolrunner 'TestRedeliveryAndDoubleConfirmWriteOnce|TestConfirmationGate'
mutant conversation-per-user internal/store/conversations.go \
	'/^func (s \*Store) LoadConversationIfChanged/,/^}/ s/AND c.user_id = ? AND/AND (c.user_id = ? OR 1 = 1) AND/' \
	./services/orchestrator 'TestSameConversationIDTwoUsers|Test.*Confirm'

# --- Ownership: a user reaches only their own rows, a tenant only its own.
mutant owner-user-get internal/store/expenses.go \
	'/^func (s \*Store) GetExpense/,/^}/ s/AND user_id = ? AND id = ?/AND (user_id = ? OR 1 = 1) AND id = ?/' \
	./services/toolrunner 'TestAuthorizationMatrix|TestOwnership'
mutant owner-tenant-update internal/store/expenses.go \
	'/^func (s \*Store) UpdateExpense/,/^}/ s/WHERE tenant_id = ? AND user_id = ?/WHERE (tenant_id = ? OR 1 = 1) AND user_id = ?/' \
	./services/toolrunner 'TestTenantsAreIsolated|TestAuthorizationMatrix|TestOwnership'
mutant owner-tenant-list internal/store/expenses.go \
	'/^func (s \*Store) ListExpenses/,/^}/ s/w.add("tenant_id = ?", f.TenantID)/w.add("(tenant_id = ? OR 1 = 1)", f.TenantID)/' \
	./services/toolrunner 'TestTenantsAreIsolated|TestAuthorizationMatrix|TestOwnership'

# --- Idempotency: a call id is answered with its stored result; a turn
# redelivered under a new message id is applied once.
mutant idem-call-id services/toolrunner/runner.go \
	's/r.store.GetToolCall(ctx, req.TenantID, req.CallID)/r.store.GetToolCall(ctx, req.TenantID, req.CallID+"~")/' \
	./services/toolrunner 'TestRedeliveryAndDoubleConfirmWriteOnce|TestARepeatedReadAnswersAsItDidFirst|TestRedeliveryRacing'
mutant idem-answered-change services/toolrunner/runner.go \
	's/if err == nil \&\& !created {/if false \&\& !created {/' \
	./services/toolrunner 'TestAChangeAnsweredBefore'
mutant idem-turn-transition services/orchestrator/transition.go \
	's/^\tif s.hasApplied(t.TurnID) {/\tif false \&\& s.hasApplied(t.TurnID) {/' \
	./services/orchestrator 'TestTextTurnAndRedelivery|TestRedelivered'
mutant idem-turn-handler services/orchestrator/apply.go \
	's/^\t\tif state.hasApplied(ev.Turn.TurnID) {/\t\tif false \&\& state.hasApplied(ev.Turn.TurnID) {/' \
	./services/orchestrator 'TestTextTurnAndRedelivery|TestRedelivered|TestCrashAtEachCommitBoundary' \
	'defence in depth: Transition ignores the duplicate (idem-turn-transition); see docs/mutation.md'

# --- Rate limits: each user has a budget of their own, never the tenant's.
mutant limit-socket-per-user services/ingress/ws.go \
	's/c.in.limits.allow(userKey{c.tenant, c.user}, c.in.now())/c.in.limits.allow(userKey{c.tenant, ""}, c.in.now())/' \
	./services/ingress 'TestRateLimit'
mutant limit-http-per-user services/ingress/chat.go \
	's/k := userKey{p.TenantID, p.UserID}/k := userKey{p.TenantID, ""}/' \
	./services/ingress 'TestRateLimit'
mutant limit-tool-per-user services/toolrunner/runner.go \
	's/strings.Join(\[\]string{req.TenantID, req.UserID, req.Tool}, ".")/strings.Join([]string{req.TenantID, req.Tool}, ".")/' \
	./services/toolrunner 'TestRateLimitHoldsAcrossReplicas'

# --- Resume: a live frame a resume already replayed is not sent again.
# Live and held frames meet one boundary since the socket's sequencer
# (services/ingress/order.go): one mutant for both.
mutant resume-live-boundary services/ingress/order.go \
	's/return f.seq > 0 \&\& f.seq <= s.replayed \&\& !f.again/return f.seq > 0 \&\& f.seq < s.replayed \&\& !f.again/' \
	./services/ingress 'TestResume'

# --- Amounts in statements: signs, direction columns, parentheses.
mutant amount-dollar-minus services/toolrunner/statements/amount.go \
	's/for range 4 { \/\/ markers/for range 1 { \/\/ markers/' \
	./services/toolrunner 'TestStatementAmounts'
mutant amount-direction-d services/toolrunner/statements/csv.go \
	's/case "AF", "D", "DR", "DB", "DEBIT", "S":/case "AF", "DR", "DB", "DEBIT", "S":/' \
	./services/toolrunner/statements 'TestRuleDebitCreditAndSigns'
mutant amount-parentheses services/toolrunner/statements/amount.go \
	's/neg, a.signed, s = !neg, true, strings.TrimSpace(s\[1:len(s)-1\])/a.signed, s = true, strings.TrimSpace(s[1:len(s)-1])/' \
	./services/toolrunner/statements 'TestAmounts|TestRuleDebitCreditAndSigns'

# --- The terminal client resends what was not acked.
mutant chat-resend cmd/purser/chat.go \
	's/if err := s.client.ResendUnacked(ctx); err != nil {/if err := error(nil); err != nil {/' \
	./cmd/purser 'TestChat'

# --- A frame refused as unavailable is sent again with its id.
mutant chat-unavailable cmd/purser/chat.go \
	's/f.Error.Code == contracts.ErrCodeUnavailable \&\& s.notQueued/false \&\& s.notQueued/' \
	./cmd/purser 'TestChat'

# --- A tool call's start that comes after its result is dropped.
mutant late-tool-start services/notifier/notifier.go \
	's/		if ended {/		if false \&\& ended {/' \
	./services/notifier 'TestAToolStart'

# --- A turn's frames are found however many came after them.
mutant frames-turn-backfill internal/store/migrations/sqlite/00007_frame_turn.sql \
	's/^    WHERE json_valid(/    WHERE 0 AND json_valid(/' \
	./internal/store 'TestFramesOfATurn'

# --- A redelivery racing its first delivery answers with the stored result.
mutant racing-stored-first services/toolrunner/runner.go \
	's/	if created {/	if true || created {/' \
	./services/toolrunner 'TestRedeliveryRacing'

# --- On Postgres a redelivered frame keeps its first seq (one-statement append).
mutant pg-frame-redelivery internal/store/inbox.go \
	's/pg.ConstraintName == "frames_turn_event"/pg.ConstraintName == "frames_turn_event_x"/' \
	./internal/store 'TestConformance/postgres/Frames'

# --- SQLite: a commit's log writes reach the file before its sync.
mutant sqlite-log-sync internal/store/vfs.go \
	'/^func vfsSync/,/^}/s/f, rc := flushed(tls, file)/f, rc := fileOf(file), int32(sqlite3.SQLITE_OK)/' \
	./internal/store 'TestAStoreKilledWhileWriting|TestTheLogsWritesAreGathered'

echo
printf 'mutant\tresult\twhere\tkilled by\n'
for r in "${results[@]}"; do printf '%s\n' "$r"; done
exit "$failed"
