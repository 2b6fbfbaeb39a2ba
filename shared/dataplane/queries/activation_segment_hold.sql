-- Marks the users a holdout keeps out: their ranks (held_ranks.rank, registered from the draws of
-- shared.audiences.holdout.held_ranks).
UPDATE segment_users SET held = true WHERE rank IN (SELECT rank FROM held_ranks)
