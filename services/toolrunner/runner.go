package toolrunner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/tracing"
	"github.com/purser-ai/purser/pkg/contracts"
)

// Tx is what tools read and write. For a mutation it is bound to the
// transaction that also marks the proposal executed.
type Tx interface {
	AddExpense(ctx context.Context, e store.Expense) (store.Expense, error)
	GetExpense(ctx context.Context, tenantID, userID string, id int64) (store.Expense, error)
	UpdateExpense(ctx context.Context, e store.Expense) (store.Expense, error)
	DeleteExpense(ctx context.Context, tenantID, userID string, id int64) error
	ListExpenses(ctx context.Context, f store.ExpenseFilter) ([]store.Expense, error)
	NearestExpenses(ctx context.Context, tenantID, userID string, id int64, n int) ([]store.Expense, error)
	ListTransactions(ctx context.Context, f store.TransactionFilter) ([]store.Transaction, error)
	LedgerSummaryMatching(ctx context.Context, tenantID, userID, from, to, query string) (store.LedgerSummary, error)
	ListLedger(ctx context.Context, f store.LedgerFilter) (store.LedgerPage, error)
	PlanImport(ctx context.Context, lines []store.Transaction) (store.ImportOutcome, error)
	PutDocument(ctx context.Context, d store.Document) (store.Document, bool, error)
	RecentDocuments(ctx context.Context, tenantID, userID string, limit int) ([]store.Document, error)
	KnownSenderDomain(ctx context.Context, tenantID, userID, domain string) (bool, error)
	ConversationFrames(ctx context.Context, tenantID, userID, conversationID string, beforeSeq int64, limit int) ([]store.Frame, error)
	GetUserSettings(ctx context.Context, tenantID, userID string) (store.UserSettings, error)
	PutUserSettings(ctx context.Context, u store.UserSettings) (store.UserSettings, error)
	SpendingBreakdown(ctx context.Context, tenantID, userID, from, to, by string, limit int) (store.SpendingBreakdown, error)
	SpendingByMonth(ctx context.Context, tenantID, userID, from, to string) (store.MonthlySpending, error)
	BiggestOutflows(ctx context.Context, tenantID, userID, from, to string, limit int) ([]store.LedgerEntry, error)
	RecurringPayments(ctx context.Context, tenantID, userID, from, to string) ([]store.RecurringPayment, error)
	ListCategories(ctx context.Context, tenantID, userID string) ([]store.Category, error)
	HasCategory(ctx context.Context, tenantID, userID, name string) (bool, error)
	AddCategory(ctx context.Context, tenantID, userID, name string, at time.Time) (bool, error)
	ListRules(ctx context.Context, tenantID, userID string) ([]store.Rule, error)
	GetRule(ctx context.Context, tenantID, userID, pattern string) (store.Rule, error)
	PutRule(ctx context.Context, r store.Rule) (store.Rule, bool, error)
	DeleteRule(ctx context.Context, tenantID, userID, pattern string) (store.Rule, error)
	Categorize(ctx context.Context, tenantID, userID string, texts ...string) (store.Rule, bool, error)
	MatchEntries(ctx context.Context, f store.PatternFilter, limit int) (int, []store.LedgerEntry, error)
	Recategorize(ctx context.Context, f store.PatternFilter, category string, at time.Time) (int, error)
	AppendAudit(ctx context.Context, e store.AuditEntry) error
	GetTransaction(ctx context.Context, tenantID, userID string, id int64) (store.Transaction, error)
	NearestTransactions(ctx context.Context, tenantID, userID string, id int64, n int) ([]store.Transaction, error)
	UpdateTransaction(ctx context.Context, t store.Transaction) (store.Transaction, error)
	RecordExpenseChange(ctx context.Context, callID string, before, after *store.Expense, at time.Time) error
	RecordTransactionUpdate(ctx context.Context, callID string, before, after store.Transaction, at time.Time) error
	GetChange(ctx context.Context, tenantID, userID string, id int64) (store.Change, error)
	LastChange(ctx context.Context, tenantID, userID, kind string) (store.Change, error)
	UndoChange(ctx context.Context, tenantID, userID string, id int64, callID string, at time.Time) (store.Change, error)
	UndoneImports(ctx context.Context, tenantID, userID, docID string) (int, error)
}

// TxStore is a transaction: the tools' view plus the bookkeeping that must
// commit with a change.
type TxStore interface {
	Tx
	TransitionProposal(ctx context.Context, tenantID, id, from, to string, at time.Time) error
	PutToolCall(ctx context.Context, c store.ToolCall, audit store.AuditEntry) (store.ToolCall, bool, error)
}

// Store is the runner's view of the system of record.
type Store interface {
	TxStore
	GetToolCall(ctx context.Context, tenantID, callID string) (store.ToolCall, error)
	GetProposal(ctx context.Context, tenantID, id string) (store.Proposal, error)
	AppendAudit(ctx context.Context, e store.AuditEntry) error
	InTx(ctx context.Context, fn func(tx TxStore) error) error
}

// Limiter admits or refuses one call of a user to a tool.
type Limiter interface {
	Allow(ctx context.Context, key string, perMinute int, now time.Time) (ok bool, retryAfter time.Duration, err error)
}

// Runner executes tool requests. Create it with New.
type Runner struct {
	tools   map[string]Tool
	store   Store
	limiter Limiter
	pub     message.Publisher
	log     *slog.Logger
	now     func() time.Time
	metrics *Metrics
	tracer  tracing.Tracer
}

// New builds a runner serving tools (all of Catalog() when empty).
func New(tools []Tool, st Store, limiter Limiter, pub message.Publisher, m *Metrics, log *slog.Logger, now func() time.Time) *Runner {
	r := &Runner{tools: map[string]Tool{}, store: st, limiter: limiter, pub: pub, log: log, now: now, metrics: m}
	for _, t := range tools {
		r.tools[t.Name] = t
	}
	return r
}

// Names lists the tools this runner serves, sorted.
func (r *Runner) Names() []string {
	names := make([]string, 0, len(r.tools))
	for n := range r.tools {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Register adds one handler per tool, each on its own durable consumer.
func (r *Runner) Register(router *message.Router, sub message.Subscriber) {
	for _, name := range r.Names() {
		c := bus.ToolConsumer(name)
		router.AddConsumerHandler(c.Name, c.Name, sub, r.Handle)
	}
}

// Handle runs one ToolRequest and publishes its result. It returns an
// error only when the result could not be made durable or published, so
// the request is redelivered; every failure of the tool itself is a result.
func (r *Runner) Handle(msg *message.Message) error {
	var req contracts.ToolRequest
	if err := contracts.Decode(msg.Payload, &req); err != nil {
		return bus.Permanent(fmt.Errorf("decode tool request: %w", err))
	}
	want, werr := bus.ToolRequestSubject(req.Tool)
	if err := bus.CheckIdentity(msg, want, werr, req.TenantID, req.UserID, req.ConversationID); err != nil {
		return err
	}
	ctx := msg.Context()
	tctx, span := r.tracer.Tool(ctx, req.ConversationID, req.Tool, req.CallID)
	res, err := r.Run(tctx, req)
	if err == nil && outcomeOf(res) != "ok" {
		tracing.Fail(span, outcomeOf(res))
	}
	tracing.End(span, err, "")
	if err != nil {
		return err
	}
	return r.publish(ctx, req, res)
}

// Run executes req exactly once per call id and returns its result.
func (r *Runner) Run(ctx context.Context, req contracts.ToolRequest) (contracts.ToolResult, error) {
	res, err := r.run(ctx, req)
	if err != nil && !errors.Is(err, bus.ErrUnavailable) && r.storeDown(ctx, err) {
		err = fmt.Errorf("%w: %w", bus.ErrUnavailable, err)
	}
	return res, err
}

// run answers a call with its stored result when it has one, without
// looking for it first: a call is nearly always new, and a look before
// each was 1.5% of purser's CPU at 1,000 bench users. A repeated call
// (a redelivery) meets its stored result where it would store its own:
// a read runs again, and remember answers with what was stored; a
// change finds it inside its transaction, which then rolls back. A
// refusal that is never stored (a deadline passed, a limit reached) is
// checked against the stored result before it is given.
func (r *Runner) run(ctx context.Context, req contracts.ToolRequest) (contracts.ToolResult, error) {
	start := time.Now()
	r.metrics.inFlight.Inc()
	defer r.metrics.inFlight.Dec()

	res, args, runErr := r.execute(ctx, req, start)
	if runErr != nil {
		return contracts.ToolResult{}, runErr
	}
	if !res.stored {
		switch done, err := r.store.GetToolCall(ctx, req.TenantID, req.CallID); {
		case err == nil:
			if res.ToolResult, err = storedResult(done); err != nil {
				return contracts.ToolResult{}, err
			}
			res.stored, res.replayed = true, true
		case !errors.Is(err, store.ErrNotFound):
			return contracts.ToolResult{}, fmt.Errorf("load call %s: %w", req.CallID, err)
		default:
			stamp(&res.ToolResult, req, start)
		}
	}
	if res.replayed {
		r.metrics.calls.WithLabelValues(req.Tool, "replayed").Inc()
		return res.ToolResult, nil
	}
	r.metrics.calls.WithLabelValues(req.Tool, outcomeOf(res.ToolResult)).Inc()
	r.metrics.latency.WithLabelValues(req.Tool).Observe(time.Since(start).Seconds())
	if !res.stored {
		if err := r.audit(ctx, req, args, res.ToolResult); err != nil {
			return contracts.ToolResult{}, err
		}
	}
	r.metrics.audits.Inc()
	return res.ToolResult, nil
}

// outcome is a call's result, whether it was stored under the call id
// (then exactly as stored, so that a replay answers byte for byte the
// same), and whether it was stored before, by an earlier run of the call.
type outcome struct {
	contracts.ToolResult
	stored, replayed bool
}

// stamp sets the call's ids and how long it took on res.
func stamp(res *contracts.ToolResult, req contracts.ToolRequest, start time.Time) {
	res.CallID, res.TurnID, res.Tool = req.CallID, req.TurnID, req.Tool
	res.Meta.DurationMS = time.Since(start).Milliseconds()
}

// remembered stamps and stores res under the call id and returns it as
// execute does.
func (r *Runner) remembered(ctx context.Context, tx TxStore, req contracts.ToolRequest, res contracts.ToolResult, args any, start time.Time) (outcome, any, error) {
	stamp(&res, req, start)
	res, created, err := r.remember(ctx, tx, req, res, args)
	return outcome{res, true, !created}, args, err
}

// execute validates, authorises, limits and runs the call. A non-nil
// error means the outcome is unknown (the store failed) and the request
// must be retried; everything else is in the result.
func (r *Runner) execute(ctx context.Context, req contracts.ToolRequest, start time.Time) (outcome, any, error) {
	now := r.now()
	tool, ok := r.tools[req.Tool]
	if !ok {
		return outcome{ToolResult: errResult(contracts.CodeUnknownTool, "This tool is not available.")}, nil, nil
	}
	spec, _ := contracts.LookupTool(req.Tool)
	args, err := spec.DecodeArgs(req.Args)
	if err != nil {
		return outcome{ToolResult: errResult(contracts.CodeInvalidArgs, err.Error())}, nil, nil
	}
	if !now.Before(req.Deadline) {
		return outcome{ToolResult: errResult(contracts.CodeTimeout, "The request expired before it could run.")}, args, nil
	}
	mutation := tool.Kind == contracts.KindMutation
	if mutation && !slices.Contains(req.Roles, contracts.RoleOwner) && !slices.Contains(req.Roles, contracts.RoleMember) {
		return outcome{ToolResult: errResult(contracts.CodeForbidden, "You have read-only access, so nothing was changed.")}, args, nil
	}
	if mutation {
		if res, ok, err := r.checkProposal(ctx, req); err != nil || !ok {
			return res, args, err
		}
	}
	if tool.PerMinute > 0 {
		key := strings.Join([]string{req.TenantID, req.UserID, req.Tool}, ".")
		ok, retry, err := r.limiter.Allow(ctx, key, tool.PerMinute, now)
		if err != nil {
			return outcome{}, nil, fmt.Errorf("rate limit: %w", err)
		}
		if !ok {
			r.metrics.rateLimited.WithLabelValues(req.Tool).Inc()
			secs := int(retry.Round(time.Second) / time.Second)
			if secs < 1 {
				secs = 1
			}
			res := errResult(contracts.CodeRateLimited, fmt.Sprintf("Too many %s calls; try again in %d seconds.", req.Tool, secs))
			res.Error.RetryAfter = secs
			return outcome{ToolResult: res}, args, nil
		}
	}
	loc, err := contracts.LoadZone(req.Timezone)
	if err != nil || req.Timezone == "" {
		loc = time.UTC
	}
	call := Call{ID: req.CallID, Caller: Caller{TenantID: req.TenantID, UserID: req.UserID, ConversationID: req.ConversationID, TurnID: req.TurnID, Roles: req.Roles, Location: loc}, Args: args, Now: now}
	// The request's deadline is on the sender's clock; what is left of it,
	// capped by the tool's own deadline, is measured on ours.
	budget := min(tool.Deadline, req.Deadline.Sub(now))
	cctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()

	if !mutation {
		out, err := safeRun(cctx, tool, r.store, call)
		if r.storeDown(ctx, err) {
			return outcome{}, args, fmt.Errorf("run %s: %w: %w", req.Tool, bus.ErrUnavailable, err)
		}
		res := r.envelope(tool, out, err, cctx)
		return r.remembered(ctx, r.store, req, res, args, start)
	}
	var res contracts.ToolResult
	var jobs []contracts.ImportJob
	err = r.store.InTx(cctx, func(tx TxStore) error {
		if err := tx.TransitionProposal(cctx, req.TenantID, req.ProposalID, "approved", "executed", now); err != nil {
			return err
		}
		out, err := safeRun(cctx, tool, tx, call)
		res = r.envelope(tool, out, err, cctx)
		if !res.OK {
			return errRollback
		}
		jobs = out.Jobs
		stamp(&res, req, start)
		stored, created, err := r.remember(cctx, tx, req, res, args)
		if err == nil && !created {
			// An earlier run of this call was answered without the
			// change (refused, or out of time), and the proposal stayed
			// approved: that answer stands, and nothing changes now.
			res = stored
			return errAnswered
		}
		return err
	})
	if err == nil {
		// Committed: start what the change queued. A lost publish leaves
		// the work queued in the store, where the importer's sweep finds it.
		r.startJobs(jobs, req)
	}
	switch {
	case errors.Is(err, errAnswered):
		return outcome{res, true, true}, args, nil
	case r.storeDown(ctx, err):
		// Nothing was changed and nothing is said: the request comes back
		// once the database does, as often as that takes.
		return outcome{}, args, fmt.Errorf("run %s: %w: %w", req.Tool, bus.ErrUnavailable, err)
	case errors.Is(err, errRollback):
		// The tool refused (bad id, not found): nothing changed, the
		// proposal stays approved, and the refusal is the result.
		return r.remembered(ctx, r.store, req, res, args, start)
	case errors.Is(err, store.ErrConflict):
		// Executed already, under another call id: never twice.
		res = errResult(contracts.CodeProposalInvalid, "That change was already made.")
		return r.remembered(ctx, r.store, req, res, args, start)
	case err != nil && cctx.Err() != nil && ctx.Err() == nil:
		res = errResult(contracts.CodeTimedOut, "It took longer than its time limit, so it was stopped; nothing was changed. It can be tried again.")
		return r.remembered(ctx, r.store, req, res, args, start)
	case err != nil:
		return outcome{}, args, fmt.Errorf("run %s: %w", req.Tool, err)
	}
	return outcome{ToolResult: res, stored: true}, args, nil
}

var (
	errRollback = errors.New("tool refused")
	errAnswered = errors.New("call answered before")
)

// storeDown reports whether err, a tool's failure, came of the database
// being unreachable (it does not answer a ping now): such a call is not
// answered "timed out" or "failed", which the person would see, but
// retried, since a database restarting is back within seconds. A tool's
// own refusal never is.
func (r *Runner) storeDown(ctx context.Context, err error) bool {
	var te *ToolError
	if err == nil || errors.Is(err, errRollback) || errors.As(err, &te) || errors.Is(err, store.ErrConflict) || ctx.Err() != nil {
		return false
	}
	p, ok := r.store.(interface{ Ping(context.Context) error })
	if !ok {
		return false
	}
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return p.Ping(pctx) != nil
}

// checkProposal lets a mutation run only for a proposal that is approved,
// belongs to the caller and this conversation, names this tool, and whose
// stored canonical args equal the request's.
//
// A proposal executed already is refused here as already made, a refusal
// never stored: when this very call executed it (a redelivery, or one
// that raced its first delivery), run answers with the result stored
// under the call id instead.
func (r *Runner) checkProposal(ctx context.Context, req contracts.ToolRequest) (outcome, bool, error) {
	refuse := outcome{ToolResult: errResult(contracts.CodeNotConfirmed, "This change needs your approval first; nothing was changed.")}
	if req.ProposalID == "" {
		return refuse, false, nil
	}
	p, err := r.store.GetProposal(ctx, req.TenantID, req.ProposalID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return refuse, false, nil
	case err != nil:
		return outcome{}, false, fmt.Errorf("load proposal: %w", err)
	}
	spec, _ := contracts.LookupTool(req.Tool)
	want, err1 := spec.CanonicalArgs(p.Args)
	got, err2 := spec.CanonicalArgs(req.Args)
	if p.UserID != req.UserID || p.ConversationID != req.ConversationID || p.Tool != req.Tool || err1 != nil || err2 != nil || string(want) != string(got) {
		return refuse, false, nil
	}
	switch p.Status {
	case "approved":
		return outcome{}, true, nil
	case "executed":
		return outcome{ToolResult: errResult(contracts.CodeProposalInvalid, "That change was already made.")}, false, nil
	}
	return refuse, false, nil
}

// safeRun runs the tool with panics contained.
func safeRun(ctx context.Context, t Tool, tx Tx, c Call) (out Output, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("tool %s panicked: %v\n%s", t.Name, p, debug.Stack())
		}
	}()
	return t.Run(ctx, tx, c)
}

// envelope turns a tool's output or error into a result, capping data.
func (r *Runner) envelope(t Tool, out Output, err error, ctx context.Context) contracts.ToolResult {
	var te *ToolError
	switch {
	case errors.As(err, &te):
		return errResult(te.Code, te.Message)
	case err != nil && ctx.Err() != nil:
		return errResult(contracts.CodeTimedOut, "It took longer than its time limit, so it was stopped; nothing was changed. It can be tried again.")
	case err != nil:
		r.log.Error("tool failed", "tool", t.Name, "err", err)
		return errResult(contracts.CodeInternal, "The tool failed; please try again.")
	}
	data, err := json.Marshal(out.Data)
	if err != nil {
		return errResult(contracts.CodeInternal, "The tool produced an unreadable result.")
	}
	data, truncated := capJSON(data, t.OutputCap)
	return contracts.ToolResult{OK: true, Data: data, Total: out.Total, Warning: out.Warning,
		Meta: contracts.ToolMeta{Bytes: int64(len(data)), Truncated: truncated}}
}

func errResult(code, msg string) contracts.ToolResult {
	return contracts.ToolResult{OK: false, Error: &contracts.ToolError{Code: code, Message: msg}}
}

// remember stores the result under the call id: a redelivery returns it.
// When another run of the same request (a redelivery, or one racing the
// first delivery) stored its result first, that one is the call's result
// (created is false): every answer to one call id is the same.
func (r *Runner) remember(ctx context.Context, tx TxStore, req contracts.ToolRequest, res contracts.ToolResult, args any) (_ contracts.ToolResult, created bool, _ error) {
	res.CallID, res.TurnID, res.Tool = req.CallID, req.TurnID, req.Tool
	b, err := json.Marshal(&res)
	if err != nil {
		return res, false, bus.Permanent(err)
	}
	call := store.ToolCall{CallID: req.CallID, TenantID: req.TenantID, Tool: req.Tool, Result: b, CreatedAt: r.now()}
	stored, created, err := tx.PutToolCall(ctx, call, r.auditEntry(req, args, res))
	if err != nil {
		return res, false, fmt.Errorf("store result: %w", err)
	}
	if created {
		return res, true, nil
	}
	res, err = storedResult(stored)
	return res, false, err
}

// storedResult is the result stored under c's call id.
func storedResult(c store.ToolCall) (contracts.ToolResult, error) {
	var res contracts.ToolResult
	if err := json.Unmarshal(c.Result, &res); err != nil {
		return res, bus.Permanent(fmt.Errorf("stored result of %s: %w", c.CallID, err))
	}
	return res, nil
}

// publish sends res on the result subject of req's conversation. Its
// Purser-User header names req's user, which the subject does not: the
// orchestrator applies the result to that user's conversation of the id.
func (r *Runner) publish(ctx context.Context, req contracts.ToolRequest, res contracts.ToolResult) error {
	subject, err := bus.ToolResultSubject(req.TenantID, req.ConversationID)
	if err != nil {
		return bus.Permanent(err)
	}
	payload, err := json.Marshal(&res)
	if err != nil {
		return bus.Permanent(err)
	}
	msg := bus.NewMessage(req.CallID+"-result", payload, bus.Headers{Type: contracts.TypeToolResult, Tenant: req.TenantID, User: req.UserID,
		Conversation: req.ConversationID, Correlation: req.TurnID})
	msg.SetContext(ctx)
	if err := r.pub.Publish(subject, msg); err != nil {
		return fmt.Errorf("publish result: %w", err)
	}
	return nil
}

// startJobs publishes import jobs, best effort (see Importer.Sweep).
func (r *Runner) startJobs(jobs []contracts.ImportJob, req contracts.ToolRequest) {
	for _, j := range jobs {
		// The job, and the notification it ends in, belong to the turn's trace.
		if err := publishJob(r.pub, j, "import-"+j.DocumentID, bus.Headers{Conversation: req.ConversationID, Correlation: req.TurnID}); err != nil {
			r.log.Warn("queue import", "document", j.DocumentID, "err", err)
		}
	}
}

func publishJob(pub message.Publisher, j contracts.ImportJob, id string, h bus.Headers) error {
	subject, err := bus.ImportSubject(j.TenantID, j.UserID)
	if err != nil {
		return err
	}
	payload, err := json.Marshal(j)
	if err != nil {
		return err
	}
	h.Type, h.Tenant, h.User = contracts.TypeImportJob, j.TenantID, j.UserID
	return pub.Publish(subject, bus.NewMessage(id, payload, h))
}
