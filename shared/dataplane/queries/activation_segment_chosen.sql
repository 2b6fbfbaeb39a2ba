-- The users a segment's rule chose (shared.targeting.service.SegmentColumns), filled by the caller a
-- chunk at a time (QueryRunner.insert): user_id, score, and the predicted value of a value-based seed
-- (NULL otherwise).
CREATE OR REPLACE TABLE segment_chosen (user_id VARCHAR, score DOUBLE, value DOUBLE)
