// fencehound-corpus: precise double math (sin, cos, exp, log, pow, sqrt, rsqrt, atan): longest code, f64 tables and slow-path range reduction
// categories: math, double, module-var, call, local
// nvrtc-flags: none
// launch: grid=1 block=32 dynamic_shared=0
// args: out:f64[256] zero, a:f64[32] random(39,-1e6,1e6), b:f64[32] random(40,0.001,1000)
// expect: coverage only (compare bitwise with sc golden run)

extern "C" __global__ void math_precise_f64(double *out, const double *a, const double *b)
{
    unsigned i = threadIdx.x;
    double x = a[i], y = b[i];
    if (i == 0) x = 1.0e200;
    double *o = out + 8 * i;
    o[0] = sin(x);
    o[1] = cos(x * 1.0e-3);
    o[2] = exp(y * 0.1 - 30.0);
    o[3] = log(y) + log1p(y);
    o[4] = pow(y, 0.37);
    o[5] = sqrt(y) + rsqrt(y);
    o[6] = atan(x);
    int e;
    double m = frexp(x, &e);
    o[7] = fma(x, y, -x * y) + ldexp(y, (int)(i & 7)) + m + (double)e;
}
