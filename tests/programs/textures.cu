// Texture objects, as image-processing code uses them: tex1Dfetch over linear memory
// (out of range reads 0), tex2D over a CUDA array with point sampling and clamp or border
// addressing, linear filtering between texels, normalized coordinates with wrap,
// 8-bit channels read as normalized floats (uchar4), a pitched 2-D texture over
// cudaMallocPitch memory, and a box blur whose result goes to global memory; surface
// objects (surf2Dread/surf2Dwrite on a float array, uchar4 surf1Dread with the zero
// boundary mode and surf1Dwrite with clamp), read back through a texture. Every value
// is checked on the host; exit 1 on any mismatch. Built with `fencehound nvcc`, run by
// tests/it/cli_programs.rs.
#include <cstdio>
#include <vector>

// (cudaMemcpyToArray is deprecated, and still what older image code calls.)
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("MISMATCH CUDA error %s at %d\n", cudaGetErrorString(e), __LINE__); return 1; } } while (0)
static int bad = 0;
#define EXPECT(c, ...) do { if (!(c)) { if (bad < 20) { printf("MISMATCH " __VA_ARGS__); printf("\n"); } bad++; } } while (0)

__global__ void fetch1d(cudaTextureObject_t t, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1Dfetch<int>(t, i - 2);  // two reads below the range
}

// out[k] for sample points (x, y) in texel coordinates.
__global__ void sample2d(cudaTextureObject_t t, const float2 *at, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<float>(t, at[i].x, at[i].y);
}

__global__ void sample1d(cudaTextureObject_t t, const float *at, float4 *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1D<float4>(t, at[i]);
}

// A 3x3 box blur of a W x H image, clamped at the edges by the texture.
__global__ void blur(cudaTextureObject_t t, float *out, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x >= w || y >= h) return;
  float s = 0;
  for (int dy = -1; dy <= 1; dy++)
    for (int dx = -1; dx <= 1; dx++) s += tex2D<float>(t, x + dx + 0.5f, y + dy + 0.5f);
  out[y * w + x] = s / 9.0f;
}

// Each element v of a W x H float surface becomes 2 v + 1 (x in bytes).
__global__ void surf_scale(cudaSurfaceObject_t s, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x < w && y < h) {
    float v = surf2Dread<float>(s, x * 4, y);
    surf2Dwrite(2.0f * v + 1.0f, s, x * 4, y);
  }
}

// Lane i reads pixel i of `a` (zeros past its four pixels); lanes 1 and 2 write their
// pixel plus one to `b`, lane 0 writes (7, 7, 7, 7) at pixel 9, which the clamp mode
// puts at pixel 3.
__global__ void surf_rgba(cudaSurfaceObject_t a, cudaSurfaceObject_t b, uchar4 *out) {
  int i = threadIdx.x;
  uchar4 p = surf1Dread<uchar4>(a, i * 4, cudaBoundaryModeZero);
  out[i] = p;
  p.x += 1; p.y += 1; p.z += 1; p.w += 1;
  if (i == 1 || i == 2) surf1Dwrite(p, b, i * 4, cudaBoundaryModeClamp);
  if (i == 0) surf1Dwrite(make_uchar4(7, 7, 7, 7), b, 9 * 4, cudaBoundaryModeClamp);
}

static cudaTextureObject_t make(const cudaResourceDesc &rd, cudaTextureAddressMode am, cudaTextureFilterMode fm,
                                cudaTextureReadMode rm, int normalized) {
  cudaTextureDesc td = {};
  td.addressMode[0] = td.addressMode[1] = td.addressMode[2] = am;
  td.filterMode = fm;
  td.readMode = rm;
  td.normalizedCoords = normalized;
  cudaTextureObject_t t = 0;
  if (cudaCreateTextureObject(&t, &rd, &td, nullptr) != cudaSuccess) printf("MISMATCH cudaCreateTextureObject failed\n");
  return t;
}

template <class T> static T *up(const std::vector<T> &h) {
  T *d = nullptr;
  cudaMalloc(&d, h.size() * sizeof(T));
  cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice);
  return d;
}

int main() {
  // 1. tex1Dfetch over linear memory.
  {
    const int n = 100;
    std::vector<int> h(n);
    for (int i = 0; i < n; i++) h[i] = i * i;
    int *d = up(h), *out;
    CK(cudaMalloc(&out, (n + 2) * sizeof(int)));
    cudaResourceDesc rd = {};
    rd.resType = cudaResourceTypeLinear;
    rd.res.linear.devPtr = d;
    rd.res.linear.desc = cudaCreateChannelDesc<int>();
    rd.res.linear.sizeInBytes = n * sizeof(int);
    cudaTextureObject_t t = make(rd, cudaAddressModeClamp, cudaFilterModePoint, cudaReadModeElementType, 0);
    fetch1d<<<1, 128>>>(t, out, n + 2);
    CK(cudaDeviceSynchronize());
    std::vector<int> r(n + 2);
    CK(cudaMemcpy(r.data(), out, r.size() * sizeof(int), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n + 2; i++) {
      int want = (i < 2) ? 0 : (i - 2) * (i - 2);
      EXPECT(r[i] == want, "tex1Dfetch %d: %d, expected %d", i - 2, r[i], want);
    }
    CK(cudaDestroyTextureObject(t));
  }
  // 2-4. A 6x4 float image in a CUDA array: point sampling with clamp and border, and
  // linear filtering.
  const int W = 6, H = 4;
  std::vector<float> img(W * H);
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) img[y * W + x] = (float)(10 * y + x);
  cudaChannelFormatDesc fch = cudaCreateChannelDesc<float>();
  cudaArray_t arr;
  CK(cudaMallocArray(&arr, &fch, W, H));
  CK(cudaMemcpy2DToArray(arr, 0, 0, img.data(), W * sizeof(float), W * sizeof(float), H, cudaMemcpyHostToDevice));
  {
    cudaChannelFormatDesc got;
    cudaExtent ext;
    unsigned flags;
    CK(cudaArrayGetInfo(&got, &ext, &flags, arr));
    EXPECT(got.x == 32 && got.f == cudaChannelFormatKindFloat && ext.width == W && ext.height == H, "cudaArrayGetInfo");
    std::vector<float> back(W * H);
    CK(cudaMemcpy2DFromArray(back.data(), W * sizeof(float), arr, 0, 0, W * sizeof(float), H, cudaMemcpyDeviceToHost));
    EXPECT(back == img, "cudaMemcpy2DFromArray differs");
  }
  cudaResourceDesc ard = {};
  ard.resType = cudaResourceTypeArray;
  ard.res.array.array = arr;
  std::vector<float2> pts = {{0.5f, 0.5f}, {3.5f, 2.5f}, {5.9f, 3.1f}, {-3.0f, 1.5f}, {8.0f, 9.0f}, {2.0f, 1.0f}, {1.75f, 0.5f}, {2.5f, 2.0f}};
  const int np = (int)pts.size();
  float2 *dp = up(pts);
  float *dout;
  CK(cudaMalloc(&dout, np * sizeof(float)));
  auto texel = [&](int x, int y) { return img[y * W + x]; };
  for (int mode = 0; mode < 3; mode++) {
    cudaTextureAddressMode am = mode == 1 ? cudaAddressModeBorder : cudaAddressModeClamp;
    cudaTextureFilterMode fm = mode == 2 ? cudaFilterModeLinear : cudaFilterModePoint;
    cudaTextureObject_t t = make(ard, am, fm, cudaReadModeElementType, 0);
    sample2d<<<1, 32>>>(t, dp, dout, np);
    CK(cudaDeviceSynchronize());
    std::vector<float> r(np);
    CK(cudaMemcpy(r.data(), dout, np * sizeof(float), cudaMemcpyDeviceToHost));
    for (int k = 0; k < np; k++) {
      float x = pts[k].x, y = pts[k].y, want;
      auto at = [&](int xi, int yi) -> float {
        if (mode == 1 && (xi < 0 || xi >= W || yi < 0 || yi >= H)) return 0.0f;
        xi = xi < 0 ? 0 : xi >= W ? W - 1 : xi;
        yi = yi < 0 ? 0 : yi >= H ? H - 1 : yi;
        return texel(xi, yi);
      };
      if (mode < 2) {
        want = at((int)floorf(x), (int)floorf(y));
      } else {
        // Bilinear around (x - 0.5, y - 0.5), each weight in 8 fractional bits (the
        // programming guide's texture fetching appendix: 9-bit fixed point).
        float xb = x - 0.5f, yb = y - 0.5f;
        int x0 = (int)floorf(xb), y0 = (int)floorf(yb);
        float a = rintf((xb - x0) * 256) / 256, b = rintf((yb - y0) * 256) / 256;
        want = (1 - a) * (1 - b) * at(x0, y0) + a * (1 - b) * at(x0 + 1, y0) + (1 - a) * b * at(x0, y0 + 1) + a * b * at(x0 + 1, y0 + 1);
      }
      EXPECT(r[k] == want, "tex2D mode %d at (%g, %g): %g, expected %g", mode, x, y, r[k], want);
    }
    CK(cudaDestroyTextureObject(t));
  }
  // 5. Normalized coordinates with wrap, and 6. uchar4 read as normalized floats: a 1-D
  // array of four RGBA texels.
  {
    std::vector<uchar4> px = {{0, 64, 128, 255}, {255, 0, 1, 2}, {10, 20, 30, 40}, {200, 100, 50, 25}};
    cudaChannelFormatDesc c4 = cudaCreateChannelDesc<uchar4>();
    cudaArray_t a4;
    CK(cudaMallocArray(&a4, &c4, 4));
    CK(cudaMemcpyToArray(a4, 0, 0, px.data(), 4 * sizeof(uchar4), cudaMemcpyHostToDevice));
    cudaResourceDesc rd = {};
    rd.resType = cudaResourceTypeArray;
    rd.res.array.array = a4;
    cudaTextureObject_t t = make(rd, cudaAddressModeWrap, cudaFilterModePoint, cudaReadModeNormalizedFloat, 1);
    std::vector<float> at = {0.1f, 0.3f, 0.6f, 0.9f, 1.3f, -0.2f};
    float *dat = up(at);
    float4 *o4;
    CK(cudaMalloc(&o4, at.size() * sizeof(float4)));
    sample1d<<<1, 32>>>(t, dat, o4, (int)at.size());
    CK(cudaDeviceSynchronize());
    std::vector<float4> r(at.size());
    CK(cudaMemcpy(r.data(), o4, r.size() * sizeof(float4), cudaMemcpyDeviceToHost));
    for (size_t k = 0; k < at.size(); k++) {
      int i = (int)floorf(at[k] * 4);
      i = ((i % 4) + 4) % 4;
      uchar4 p = px[i];
      bool ok = r[k].x == p.x / 255.0f && r[k].y == p.y / 255.0f && r[k].z == p.z / 255.0f && r[k].w == p.w / 255.0f;
      EXPECT(ok, "uchar4 at %g: (%g, %g, %g, %g), texel %d", at[k], r[k].x, r[k].y, r[k].z, r[k].w, i);
    }
    CK(cudaDestroyTextureObject(t));
    CK(cudaFreeArray(a4));
  }
  // 7. A pitched 2-D texture and a box blur through it.
  {
    float *pm;
    size_t pitch;
    CK(cudaMallocPitch(&pm, &pitch, W * sizeof(float), H));
    CK(cudaMemcpy2D(pm, pitch, img.data(), W * sizeof(float), W * sizeof(float), H, cudaMemcpyHostToDevice));
    cudaResourceDesc rd = {};
    rd.resType = cudaResourceTypePitch2D;
    rd.res.pitch2D.devPtr = pm;
    rd.res.pitch2D.desc = fch;
    rd.res.pitch2D.width = W;
    rd.res.pitch2D.height = H;
    rd.res.pitch2D.pitchInBytes = pitch;
    cudaTextureObject_t t = make(rd, cudaAddressModeClamp, cudaFilterModePoint, cudaReadModeElementType, 0);
    float *out;
    CK(cudaMalloc(&out, W * H * sizeof(float)));
    blur<<<dim3(1, H), 32>>>(t, out, W, H);
    CK(cudaDeviceSynchronize());
    std::vector<float> r(W * H);
    CK(cudaMemcpy(r.data(), out, r.size() * sizeof(float), cudaMemcpyDeviceToHost));
    for (int y = 0; y < H; y++)
      for (int x = 0; x < W; x++) {
        float s = 0;
        for (int dy = -1; dy <= 1; dy++)
          for (int dx = -1; dx <= 1; dx++) {
            int xi = x + dx < 0 ? 0 : x + dx >= W ? W - 1 : x + dx;
            int yi = y + dy < 0 ? 0 : y + dy >= H ? H - 1 : y + dy;
            s += img[yi * W + xi];
          }
        EXPECT(r[y * W + x] == s / 9.0f, "blur (%d, %d): %g, expected %g", x, y, r[y * W + x], s / 9.0f);
      }
    CK(cudaDestroyTextureObject(t));
  }
  CK(cudaFreeArray(arr));
  // Surfaces: a float array scaled in place, read back by a copy and through a texture.
  {
    cudaArray_t sa;
    CK(cudaMallocArray(&sa, &fch, W, H, cudaArraySurfaceLoadStore));
    CK(cudaMemcpy2DToArray(sa, 0, 0, img.data(), W * sizeof(float), W * sizeof(float), H, cudaMemcpyHostToDevice));
    cudaResourceDesc rd = {};
    rd.resType = cudaResourceTypeArray;
    rd.res.array.array = sa;
    cudaSurfaceObject_t so;
    CK(cudaCreateSurfaceObject(&so, &rd));
    surf_scale<<<dim3(1, H), 32>>>(so, W, H);
    CK(cudaDeviceSynchronize());
    std::vector<float> back(W * H);
    CK(cudaMemcpy2DFromArray(back.data(), W * sizeof(float), sa, 0, 0, W * sizeof(float), H, cudaMemcpyDeviceToHost));
    for (int k = 0; k < W * H; k++) EXPECT(back[k] == 2.0f * img[k] + 1.0f, "surface %d: %g", k, back[k]);
    cudaTextureObject_t t = make(rd, cudaAddressModeClamp, cudaFilterModePoint, cudaReadModeElementType, 0);
    sample2d<<<1, 32>>>(t, dp, dout, np);
    CK(cudaDeviceSynchronize());
    std::vector<float> r(np);
    CK(cudaMemcpy(r.data(), dout, np * sizeof(float), cudaMemcpyDeviceToHost));
    for (int k = 0; k < np; k++) {
      int xi = (int)floorf(pts[k].x), yi = (int)floorf(pts[k].y);
      xi = xi < 0 ? 0 : xi >= W ? W - 1 : xi;
      yi = yi < 0 ? 0 : yi >= H ? H - 1 : yi;
      EXPECT(r[k] == 2.0f * texel(xi, yi) + 1.0f, "texture over the surface at %d: %g", k, r[k]);
    }
    CK(cudaDestroyTextureObject(t));
    CK(cudaDestroySurfaceObject(so));
    CK(cudaFreeArray(sa));
    // uchar4 pixels with the zero and clamp boundary modes.
    std::vector<uchar4> px = {{1, 2, 3, 4}, {10, 20, 30, 40}, {100, 110, 120, 130}, {250, 251, 252, 253}};
    cudaChannelFormatDesc c4 = cudaCreateChannelDesc<uchar4>();
    cudaArray_t pa, pz;
    CK(cudaMallocArray(&pa, &c4, 4, 0, cudaArraySurfaceLoadStore));
    CK(cudaMallocArray(&pz, &c4, 4, 0, cudaArraySurfaceLoadStore));
    CK(cudaMemcpy2DToArray(pa, 0, 0, px.data(), 4 * sizeof(uchar4), 4 * sizeof(uchar4), 1, cudaMemcpyHostToDevice));
    std::vector<uchar4> zero(4, make_uchar4(0, 0, 0, 0));
    CK(cudaMemcpy2DToArray(pz, 0, 0, zero.data(), 4 * sizeof(uchar4), 4 * sizeof(uchar4), 1, cudaMemcpyHostToDevice));
    cudaSurfaceObject_t sb;
    rd.res.array.array = pa;
    CK(cudaCreateSurfaceObject(&so, &rd));
    rd.res.array.array = pz;
    CK(cudaCreateSurfaceObject(&sb, &rd));
    uchar4 *dout4;
    CK(cudaMalloc(&dout4, 8 * sizeof(uchar4)));
    surf_rgba<<<1, 8>>>(so, sb, dout4);
    CK(cudaDeviceSynchronize());
    std::vector<uchar4> got(8), pb(4);
    CK(cudaMemcpy(got.data(), dout4, 8 * sizeof(uchar4), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy2DFromArray(pb.data(), 4 * sizeof(uchar4), pz, 0, 0, 4 * sizeof(uchar4), 1, cudaMemcpyDeviceToHost));
    auto same = [](uchar4 a, uchar4 b) { return a.x == b.x && a.y == b.y && a.z == b.z && a.w == b.w; };
    for (int i = 0; i < 8; i++)
      EXPECT(same(got[i], i < 4 ? px[i] : make_uchar4(0, 0, 0, 0)), "surf1Dread %d: (%d, %d, %d, %d)", i, got[i].x, got[i].y, got[i].z, got[i].w);
    uchar4 want[4] = {make_uchar4(0, 0, 0, 0), make_uchar4(11, 21, 31, 41), make_uchar4(101, 111, 121, 131), make_uchar4(7, 7, 7, 7)};
    for (int i = 0; i < 4; i++)
      EXPECT(same(pb[i], want[i]), "surf1Dwrite %d: (%d, %d, %d, %d)", i, pb[i].x, pb[i].y, pb[i].z, pb[i].w);
    CK(cudaDestroySurfaceObject(so));
    CK(cudaDestroySurfaceObject(sb));
    CK(cudaFreeArray(pa));
    CK(cudaFreeArray(pz));
  }
  // An array made for surfaces too keeps its flags.
  {
    cudaArray_t sa;
    CK(cudaMallocArray(&sa, &fch, 8, 8, cudaArraySurfaceLoadStore));
    cudaChannelFormatDesc got;
    cudaExtent ext;
    unsigned flags = 0;
    CK(cudaArrayGetInfo(&got, &ext, &flags, sa));
    EXPECT(flags == cudaArraySurfaceLoadStore && ext.width == 8 && ext.height == 8, "surface array flags %u", flags);
    CK(cudaFreeArray(sa));
  }
  if (bad) return 1;
  printf("OK: textures\n");
  return 0;
}
