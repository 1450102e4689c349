/*
 * ops_vision: detection and vision operators of the default ONNX domain,
 * cpu_ref kernels: NonMaxSuppression (nms.c), GridSample and AffineGrid
 * (grid_sample.c), RoiAlign (roi_align.c), Col2Im and MaxUnpool
 * (col2im.c), DeformConv (deform_conv.c).
 */
#include "vision.h"

static sy_status *vision_init(const sy_host_api *host, sy_plugin *p, const sy_options *opts)
{
    (void)opts;
    SY_TRY(vision_nms_register(host, p));
    SY_TRY(vision_grid_sample_register(host, p));
    SY_TRY(vision_roi_align_register(host, p));
    SY_TRY(vision_max_roi_pool_register(host, p));
    SY_TRY(vision_col2im_register(host, p));
    return vision_deform_conv_register(host, p);
}

static void vision_fini(void) {}

static const sy_plugin_desc desc = {
    .struct_size = sizeof(sy_plugin_desc),
    .abi_major = SY_ABI_MAJOR,
    .abi_minor = SY_ABI_MINOR,
    .name = "ops_vision",
    .version = "0.1.0",
    .description = "detection and vision operators (NonMaxSuppression, GridSample, AffineGrid, RoiAlign, Col2Im, "
                   "MaxUnpool, DeformConv), cpu_ref kernels",
    .kinds = SY_PLUGIN_KIND_OPS,
    .option_keys = NULL,
    .init = vision_init,
    .fini = vision_fini,
};

SY_PLUGIN_DEFINE(desc)
