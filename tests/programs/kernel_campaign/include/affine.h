// A header found through the campaign's relative -I.
struct Affine {
    double scale;
    int offset;
    char tag;
    float3 shift;
};
