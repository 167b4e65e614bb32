package orchestrator

import "log/slog"

// logRejection writes one line when a transition rejected the model's
// output: with its one corrective retry granted, or, the second time, with
// the turn ended. The reason is the validation's own words, which never
// quote the user's data; the key never reaches the orchestrator.
func logRejection(log *slog.Logger, eff Effects, tenant, turn string) {
	switch {
	case eff.Rejected == "":
	case eff.RetryGranted:
		log.Info("model output rejected; one corrective retry", "reason", eff.Rejected, "tenant", tenant, "turn", turn)
	default:
		log.Info("model output rejected after its corrective retry; the turn ends", "reason", eff.Rejected, "tenant", tenant, "turn", turn)
	}
}

// currentTurnID is the id of the turn in progress, or "".
func currentTurnID(s State) string {
	if s.Turn == nil {
		return ""
	}
	return s.Turn.TurnID
}
