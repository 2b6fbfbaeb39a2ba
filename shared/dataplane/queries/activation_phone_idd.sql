-- The national numbers of region $region (activation_phone_forms) as parse reads them: a number that
-- starts with the plan's international prefix ($idd, anchored; '' for none) not followed by a 0
-- becomes digits that start with a calling code (intl); one that starts with the region's own calling
-- code is left to the Python normaliser (parse weighs both readings of it).
UPDATE phone_steps
SET intl = substr(national, length(regexp_extract(national, $idd)) + 1), national = NULL, idd = true
WHERE region = $region
    AND national IS NOT NULL
    AND $idd <> ''
    AND regexp_matches(national, $idd)
    AND NOT starts_with(substr(national, length(regexp_extract(national, $idd)) + 1), '0');
UPDATE phone_steps SET national = NULL
WHERE region = $region AND national IS NOT NULL AND starts_with(national, $country_code)
