/* A measured curve y(x) given as points, such as GEMM efficiency by size. */
#pragma once

/** Most points a curve may have. */
#define CURVE_MAX_POINTS 32

/** A measured curve y(x), x strictly increasing. */
struct curve {
	int n;
	double x[CURVE_MAX_POINTS];
	double y[CURVE_MAX_POINTS];
};
