/* ops_vision internals: each file registers its operators. */
#ifndef SY_OPS_VISION_H
#define SY_OPS_VISION_H

#include "switchyard/sy_sdk.h"

sy_status *vision_nms_register(const sy_host_api *host, sy_plugin *p);          /* nms.c */
sy_status *vision_grid_sample_register(const sy_host_api *host, sy_plugin *p);  /* grid_sample.c: GridSample, AffineGrid */
sy_status *vision_roi_align_register(const sy_host_api *host, sy_plugin *p);    /* roi_align.c */
sy_status *vision_max_roi_pool_register(const sy_host_api *host, sy_plugin *p); /* max_roi_pool.c */
sy_status *vision_col2im_register(const sy_host_api *host, sy_plugin *p);       /* col2im.c: Col2Im, MaxUnpool */
sy_status *vision_deform_conv_register(const sy_host_api *host, sy_plugin *p);  /* deform_conv.c */

#endif
