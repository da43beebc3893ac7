"""The review's case table (``shared/reviews/security.md``): every counted case and the test that reruns it.

99 cases, as the review counted them (E18 was noted, not counted). Each maps to
``(test module, test function)`` in this folder; ``test_case_table`` checks the
table is whole and every test it names exists, so a case cannot silently drop out.
"""

from __future__ import annotations

OWN = "test_ownership"
KILL = "test_kill_points"
SWAPS = "test_swaps"
TOGETHER = "test_runs_together"
EXPORT = "test_export_injection"
REPLIES = "test_hostile_replies"
KEYS = "test_key_leaks"
ESC = "test_report_escaping"
TERM = "test_terminal_csv"
ZIPS = "test_zip_inputs"
READS = "test_file_reads"
INPUTS = "test_inputs"
IMAGES = "test_image_roots"
CACHE = "test_cache_rows"
CATCH = "test_catch_all"
MISC = "test_misc"

KILL_TEST = "test_a_kill_at_every_passage_loses_nothing_and_a_rerun_finishes"
MALFORMED = "test_a_malformed_reply_is_a_sample_error_never_a_crash"
OVERSIZED = "test_an_oversized_reply_is_refused_at_the_cap"
NO_KEY = "test_no_file_a_run_writes_holds_the_key"

CASES: dict[str, tuple[str, str]] = {
    # A. output folders
    "A0": (OWN, "test_a1_a2_report_files_or_a_run_json_make_no_report_folder"),
    "A1": (OWN, "test_a1_a2_report_files_or_a_run_json_make_no_report_folder"),
    "A2": (OWN, "test_a1_a2_report_files_or_a_run_json_make_no_report_folder"),
    "A3": (OWN, "test_a3_a_failed_synth_leaves_no_marker_and_a_pwa_is_refused"),
    "A4": (OWN, "test_a4_eval_refuses_a_users_results_folder"),
    "A4b": (OWN, "test_a_symbolic_link_is_never_an_output"),
    "A5": (OWN, "test_a5_build_force_keeps_a_file_in_a_subfolder_it_writes"),
    "A5b": (OWN, "test_a5_build_force_keeps_a_file_in_a_subfolder_it_writes"),
    "A6": (OWN, "test_a6_a7_annotate_and_agreement_refuse_foreign_files"),
    "A7": (OWN, "test_a6_a7_annotate_and_agreement_refuse_foreign_files"),
    "A8": (OWN, "test_a8_dry_runs_send_and_write_nothing"),
    "A9": (OWN, "test_a9_a_re_export_replaces_only_its_own_files"),
    # D. exports
    "D1": (EXPORT, "test_hostile_names_export_as_data_and_load_without_running"),
    "D1b": (EXPORT, "test_hostile_names_export_as_data_and_load_without_running"),
    "D2": (EXPORT, "test_crafted_measure_ids_are_refused_before_anything_is_written"),
    "D3": (EXPORT, "test_crafted_measure_ids_are_refused_before_anything_is_written"),
    "D4": (EXPORT, "test_paths_are_confined_to_out"),
    "D5": (EXPORT, "test_the_question_hashes_are_required"),
    "D6": (EXPORT, "test_hostile_titles_stay_in_the_data_files"),
    # E. model-server misbehaviour
    "E1": (REPLIES, "test_slowloris_times_out"),
    "E2": (REPLIES, OVERSIZED),
    "E3": (REPLIES, OVERSIZED),
    "E4": (REPLIES, OVERSIZED),
    "E5": (REPLIES, MALFORMED),
    "E6": (REPLIES, MALFORMED),
    "E7": (REPLIES, MALFORMED),
    "E8a": (KEYS, "test_a_redirect_keeps_the_key_at_home"),
    "E8b": (KEYS, "test_a_redirect_keeps_the_key_at_home"),
    "E9": (REPLIES, "test_retry_after_is_capped"),
    "E10a": (KEYS, NO_KEY),
    "E10b": (KEYS, NO_KEY),
    "E10c": (KEYS, NO_KEY),
    "E10d": (KEYS, NO_KEY),
    "E11": (KEYS, "test_with_a_proxy_set_a_loopback_server_gets_the_key_and_the_proxy_nothing"),
    "E12": (REPLIES, "test_the_reviews_1_gib_gzip_bomb_costs_less_than_100_mb"),
    "E13": (ESC, "test_e13_long_replies_are_cut_in_the_viewer_and_whole_in_the_samples"),
    "E14": (REPLIES, MALFORMED),
    "E15": (REPLIES, MALFORMED),
    "E16": (REPLIES, "test_a_non_canonical_loopback_url_is_a_config_error"),
    "E17": (REPLIES, "test_the_loopback_rule_and_the_clients_read_one_host"),
    "E19": (KEYS, "test_debug_logs_hold_no_key"),
    # H. secrets
    "H1": (KEYS, NO_KEY),
    "H2": (KEYS, "test_debug_logs_hold_no_key"),
    # X. escaping
    "X1": (ESC, "test_x1_report_html_escapes_every_text"),
    "X2": (ESC, "test_x2_report_md_renders_no_live_html"),
    "X3": (TERM, "test_x3_report_csvs_quote_a_formula_dataset_name"),
    "X4": (TERM, "test_x4_every_formula_cell_is_quoted"),
    "X5": (ESC, "test_x5_latex_in_a_model_name_is_shown_as_typed"),
    "X6": (TERM, "test_x7_control_sequences_in_a_folder_name_never_reach_the_terminal"),
    "X7": (TERM, "test_x7_control_sequences_in_a_folder_name_never_reach_the_terminal"),
    "X8": (ESC, "test_x8_a_bidi_override_is_data_not_markup"),
    "X9": (ESC, "test_x9_template_like_titles_reach_the_prompt_literally"),
    # B. malformed and hostile inputs
    "B1": (ZIPS, "test_b1_a_traversing_member_is_refused"),
    "B2": (ZIPS, "test_b2_an_absolute_member_is_refused"),
    "B3": (ZIPS, "test_b3_a_broken_line_names_the_zip_and_leaves_nothing"),
    "B4": (ZIPS, "test_b4_a_zip_of_no_dataset_is_refused_without_unpacking"),
    "B5": (ZIPS, "test_b5_a_symlink_member_is_written_as_its_text"),
    "B6": (ZIPS, "test_b6_members_no_format_reads_are_never_unpacked"),
    "B7": (READS, "test_b7_b9_dataset_files_that_are_not_files"),
    "B8": (READS, "test_b7_b9_dataset_files_that_are_not_files"),
    "B9": (READS, "test_b7_b9_dataset_files_that_are_not_files"),
    "B10": (INPUTS, "test_b10_a_ratings_file_linked_from_outside_is_read"),
    "B11": (INPUTS, "test_b11_crlf_files_load"),
    "B12": (INPUTS, "test_b12_a_duplicate_header_column_names_file_line_field"),
    "B13": (INPUTS, "test_b13_a_header_with_spaces_is_one_line"),
    "B14": (INPUTS, "test_b14_a_utf16_file_is_one_line"),
    "B15": (INPUTS, "test_b15_a_latin1_byte_names_its_line"),
    "B16": (INPUTS, "test_b16_a_nul_byte_in_a_title_is_accepted"),
    "B17": (INPUTS, "test_b17_one_huge_line_is_one_bounded_error"),
    "B18": (INPUTS, "test_b18_a_metadata_csv_of_100000_columns_is_bounded"),
    "B19": (INPUTS, "test_b19_a_recbole_user_id_of_256_kib_builds_and_evaluates"),
    "B20": (INPUTS, "test_b20_lunar_anchors_that_never_end_are_one_line"),
    "B21": (READS, "test_b21_metadata_from_a_device_is_one_line"),
    "B22": (READS, "test_b22_settings_files_that_never_end_are_refused"),
    "B23": (READS, "test_b23_symlink_loops_do_not_hang"),
    "B24": (READS, "test_b24_a_broken_samples_line_is_named"),
    "B25": (INPUTS, "test_b25_report_recomputes_missing_or_wrong_metrics"),
    # I. local images
    "I1": (IMAGES, "test_i1_describe_images_sends_only_the_image_it_may"),
    "I2": (IMAGES, "test_i2_roots_a_crafted_manifest_names_are_never_trusted"),
    # K. kill -9, concurrency, atomicity
    "K1": (KILL, KILL_TEST),  # build-new, at every kill point
    "K2": (KILL, KILL_TEST),  # build over a suite with runs/
    "K3": (SWAPS, "test_a_real_kill_9_mid_swap_loses_nothing"),
    "K4": (SWAPS, "test_k4_a_stale_trash_named_by_this_very_pid_is_no_crash"),
    "K5": (TOGETHER, "test_k5_kill_9_mid_eval_then_rerun_matches_an_uninterrupted_run"),
    "K6": (TOGETHER, "test_k6_two_identical_evals_at_once_agree"),
    "K7": (TOGETHER, "test_k7_two_evals_on_one_run_keep_each_others_samples"),
    "K8": (KILL, KILL_TEST),  # report, killed between its files
    "K9": (KILL, KILL_TEST),  # export
    "K10": (KILL, KILL_TEST),  # lunar synth
    "K11": (TOGETHER, "test_k11_ctrl_c_in_report_exits_130_in_one_line_and_writes_nothing"),
    "K12": (TOGETHER, "test_k12_a_failed_run_is_unscored_unmarked_and_blank_in_the_report"),
    # G. response cache
    "G1": (CACHE, "test_a_damaged_cache_file_is_one_line"),
    "G2": (CACHE, "test_a_damaged_cache_file_is_one_line"),
    "G3": (CACHE, "test_a_damaged_cache_file_is_one_line"),
    "G4": (CACHE, "test_g4_a_garbage_wal_is_ignored"),
    "G5": (CACHE, "test_g5_a_corrupt_row_is_a_miss"),
    "G6": (CATCH, "test_an_unexpected_error_is_one_traceback_and_one_line"),
    # M. misc
    "M1": (MISC, "test_m1_a_model_spec_makes_one_safe_path_component"),
    "M2": (MISC, "test_m2_describe_image_on_a_suite_without_image_measures_runs_as_rendered"),
}
