/* plan-cli calibrate: the session shared by its command and its output. */
#pragma once

#include <stdbool.h>

#include "cli/options.h"
#include "io/calib_keys.h"
#include "io/runs_csv.h"
#include "plan/calibrate.h"
#include "plan/cluster.h"
#include "plan/framework.h"
#include "plan/model.h"

/** The runs, the profiles they are predicted with, the keys and the results. */
struct calib_session {
	const struct calibrate_request *req;
	struct run_set set;
	struct model *models;             /**< one per run */
	struct framework *frameworks;     /**< one per run, as loaded */
	const struct framework **fw;      /**< one per run: its own, or &fit_fw */
	struct compressor *compressors;   /**< one per run, as loaded when it names one */
	const struct compressor **cmp;    /**< one per run: its compressor, or NULL */
	double *measured_s;               /**< one per run */
	struct cluster cluster;
	bool cluster_loaded;
	struct framework fit_fw;          /**< the framework whose keys are fitted */
	bool fits_framework;
	struct calib_key keys[CALIB_MAX_PARAMS];
	const char *names[CALIB_MAX_PARAMS];
	double start[CALIB_MAX_PARAMS], lo[CALIB_MAX_PARAMS], hi[CALIB_MAX_PARAMS];
	int nkeys;
	struct calib_problem problem;
	struct calib_fit fit;
	double *before, *after, *cv;      /**< relative errors per run */
	int folds;
	bool cv_ok;
	char cv_why[768];                 /**< why there is no cross-validated error */
	bool default_keys;                /**< no --fit: the keys were chosen by the runs */
	int nleft;                        /**< default keys left out of the fit */
	char left_key[CALIB_MAX_PARAMS][CALIB_KEY_LEN];
	char left_why[CALIB_MAX_PARAMS][320];  /**< why, and the value kept */
};

/** The calibrated cluster profile as YAML with its comment header (malloc'd; NULL: no memory). */
char *calibrate_cluster_yaml(const struct calib_session *s);

/** The calibrated framework profile as YAML (malloc'd; NULL: no memory). */
char *calibrate_framework_yaml(const struct calib_session *s);

/** Print the report as text. */
void calibrate_print_text(const struct calib_session *s);

/** Print the report as JSON; false when out of memory. */
bool calibrate_print_json(const struct calib_session *s);
