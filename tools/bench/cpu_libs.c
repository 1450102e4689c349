/*
 * The measurement behind docs/cpu.md: the largest convolution of the issue-17
 * models (super_resolution-10's second layer: 1x64x224x224, 64 filters 3x3,
 * pad 1, 3.70 GFLOP) through each candidate library Debian 12 ships, best of
 * five runs, next to the core's FMA peak measured by a register-only loop in
 * the same run. Candidates whose headers are missing are skipped.
 *   tools/bench/cpu_libs.sh [THREADS]
 */
#define _GNU_SOURCE
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if __has_include(<xnnpack.h>)
#include <pthreadpool.h>
#include <xnnpack.h>
#define HAVE_XNNPACK 1
#endif
#if __has_include(<oneapi/dnnl/dnnl.h>)
#include <oneapi/dnnl/dnnl.h>
#define HAVE_DNNL 1
#endif
#if __has_include(<cblas.h>) && defined(WITH_CBLAS)
#include <cblas.h>
#define HAVE_CBLAS 1
#endif
#define C 64
#define H 224
#define W 224
static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}
static const double gflop = 2.0 * C * C * 9 * H * W / 1e9;
static void report(const char *n, const double *t, int k)
{
    double b = 1e9;
    for (int i = 0; i < k; i++)
        if (t[i] < b)
            b = t[i];
    printf("%-44s best %7.2f ms  %6.1f GFLOP/s\n", n, b * 1e3, gflop / b);
}
#define DECL(T,S) T a0=S(0),a1=S(1),a2=S(2),a3=S(3),a4=S(4),a5=S(5),a6=S(6),a7=S(7),a8=S(8),a9=S(9),a10=S(10),a11=S(11);
#define STEP(F) a0=F(a0,b,c);a1=F(a1,b,c);a2=F(a2,b,c);a3=F(a3,b,c);a4=F(a4,b,c);a5=F(a5,b,c);a6=F(a6,b,c);a7=F(a7,b,c);a8=F(a8,b,c);a9=F(a9,b,c);a10=F(a10,b,c);a11=F(a11,b,c);
__attribute__((target("avx512f"))) static double run512(long n){
  DECL(__m512,_mm512_set1_ps) __m512 b=_mm512_set1_ps(1.0000001f), c=_mm512_set1_ps(1e-7f);
  double t0=now(); for(long k=0;k<n;k++){STEP(_mm512_fmadd_ps)} double t=now()-t0;
  a0=_mm512_add_ps(a0,a1);a2=_mm512_add_ps(a2,a3);a4=_mm512_add_ps(a4,a5);a6=_mm512_add_ps(a6,a7);a8=_mm512_add_ps(a8,a9);a10=_mm512_add_ps(a10,a11);
  a0=_mm512_add_ps(a0,a2);a4=_mm512_add_ps(a4,a6);a8=_mm512_add_ps(a8,a10);a0=_mm512_add_ps(a0,a4);a0=_mm512_add_ps(a0,a8);
  if(_mm512_reduce_add_ps(a0)==1.2345f)puts("");
  return 2.0*16*12*n/t/1e9;}
__attribute__((target("avx2,fma"))) static double run256(long n){
  DECL(__m256,_mm256_set1_ps) __m256 b=_mm256_set1_ps(1.0000001f), c=_mm256_set1_ps(1e-7f);
  double t0=now(); for(long k=0;k<n;k++){STEP(_mm256_fmadd_ps)} double t=now()-t0;
  a0=_mm256_add_ps(a0,a1);a2=_mm256_add_ps(a2,a3);a4=_mm256_add_ps(a4,a5);a6=_mm256_add_ps(a6,a7);a8=_mm256_add_ps(a8,a9);a10=_mm256_add_ps(a10,a11);
  a0=_mm256_add_ps(a0,a2);a4=_mm256_add_ps(a4,a6);a8=_mm256_add_ps(a8,a10);a0=_mm256_add_ps(a0,a4);a0=_mm256_add_ps(a0,a8);
  float o[8]; _mm256_storeu_ps(o,a0); if(o[0]==1.2345f)puts("");
  return 2.0*8*12*n/t/1e9;}
int main(int argc, char **argv)
{
  { double b5 = 0, b2 = 0; for (int r = 0; r < 5; r++) { double x = run512(20000000); if (x > b5) b5 = x; x = run256(20000000); if (x > b2) b2 = x; }
    printf("peak of one core (register-only FMA loop): AVX-512 %.1f GFLOP/s, AVX2 %.1f GFLOP/s\n", b5, b2); }

  int threads=argc>1?atoi(argv[1]):1; int R=5; double t[8];
  float*x=aligned_alloc(64,4*C*H*W),*y=aligned_alloc(64,4*C*H*W),*w=aligned_alloc(64,4*C*C*9),*b=calloc(C,4);
  for(int i=0;i<C*H*W;i++)x[i]=(float)(i%17)/17.f; for(int i=0;i<C*C*9;i++)w[i]=(float)(i%13)/13.f-.5f;
#ifdef HAVE_CBLAS
  /* OpenBLAS: im2col + sgemm */
  openblas_set_num_threads(threads);
  float*col=aligned_alloc(64,4L*C*9*H*W);
  for(int r=0;r<R;r++){double t0=now();
    for(int c=0;c<C;c++)for(int ky=0;ky<3;ky++)for(int kx=0;kx<3;kx++){float*d=col+((long)(c*9+ky*3+kx))*H*W;
      for(int oy=0;oy<H;oy++){int iy=oy+ky-1;for(int ox=0;ox<W;ox++){int ix=ox+kx-1;d[oy*W+ox]=(iy<0||iy>=H||ix<0||ix>=W)?0:x[(c*H+iy)*W+ix];}}}
    cblas_sgemm(CblasRowMajor,CblasNoTrans,CblasNoTrans,C,H*W,C*9,1.f,w,C*9,col,H*W,0.f,y,H*W);
    t[r]=now()-t0;}
  report("openblas im2col+sgemm (NCHW)",t,R);
  for(int r=0;r<R;r++){double t0=now();cblas_sgemm(CblasRowMajor,CblasNoTrans,CblasNoTrans,C,H*W,C*9,1.f,w,C*9,col,H*W,0.f,y,H*W);t[r]=now()-t0;}
  report("openblas sgemm only",t,R);
#endif
#ifdef HAVE_XNNPACK
  /* XNNPACK NHWC */
  xnn_initialize(NULL); pthreadpool_t pool=threads>1?pthreadpool_create(threads):NULL; xnn_operator_t op;
  float*wx=malloc(4*C*C*9); for(int o=0;o<C;o++)for(int i=0;i<C;i++)for(int k=0;k<9;k++)wx[(o*9+k)*C+i]=w[(o*C+i)*9+k];
  if(xnn_create_convolution2d_nhwc_f32(1,1,1,1,3,3,1,1,1,1,1,C,C,C,C,wx,b,-1e30f,1e30f,0,&op)!=xnn_status_success){puts("xnn create failed");}
  xnn_setup_convolution2d_nhwc_f32(op,1,H,W,x,y,pool);
  for(int r=0;r<R;r++){double t0=now();xnn_run_operator(op,pool);t[r]=now()-t0;}
  report("xnnpack conv nhwc f32",t,R);
#endif
#ifdef HAVE_DNNL
  /* oneDNN */
  dnnl_engine_t eng; dnnl_stream_t st; dnnl_engine_create(&eng,dnnl_cpu,0); dnnl_stream_create(&st,eng,dnnl_stream_default_flags);
  dnnl_dims_t sd={1,C,H,W},wd={C,C,3,3},bd={C},dd={1,C,H,W},str={1,1},pad={1,1};
  for(int anyfmt=0;anyfmt<2;anyfmt++){
  dnnl_memory_desc_t smd,wmd,bmd,dmd,wany,sany,dany;
  dnnl_memory_desc_init_by_tag(&smd,4,sd,dnnl_f32,dnnl_nchw);dnnl_memory_desc_init_by_tag(&dmd,4,dd,dnnl_f32,dnnl_nchw);
  dnnl_memory_desc_init_by_tag(&wmd,4,wd,dnnl_f32,dnnl_oihw);dnnl_memory_desc_init_by_tag(&bmd,1,bd,dnnl_f32,dnnl_x);
  dnnl_memory_desc_init_by_tag(&wany,4,wd,dnnl_f32,dnnl_format_tag_any);
  dnnl_memory_desc_init_by_tag(&sany,4,sd,dnnl_f32,anyfmt?dnnl_format_tag_any:dnnl_nchw);dnnl_memory_desc_init_by_tag(&dany,4,dd,dnnl_f32,anyfmt?dnnl_format_tag_any:dnnl_nchw);
  dnnl_convolution_desc_t cd; dnnl_convolution_forward_desc_init(&cd,dnnl_forward_inference,dnnl_convolution_direct,&sany,&wany,&bmd,&dany,str,pad,pad);
  dnnl_primitive_desc_t pd; if(dnnl_primitive_desc_create(&pd,&cd,NULL,eng,NULL)){puts("dnnl pd failed");return 1;}
  const char*impl;dnnl_primitive_desc_query(pd,dnnl_query_impl_info_str,0,&impl);
  const dnnl_memory_desc_t*wq=dnnl_primitive_desc_query_md(pd,dnnl_query_weights_md,0),*sq=dnnl_primitive_desc_query_md(pd,dnnl_query_src_md,0),*dq=dnnl_primitive_desc_query_md(pd,dnnl_query_dst_md,0);
  dnnl_memory_t ms,mw,mb,md,mwp,msp,mdp; dnnl_memory_create(&ms,&smd,eng,x);dnnl_memory_create(&mw,&wmd,eng,w);dnnl_memory_create(&mb,&bmd,eng,b);dnnl_memory_create(&md,&dmd,eng,y);
  dnnl_memory_create(&mwp,wq,eng,DNNL_MEMORY_ALLOCATE);dnnl_memory_create(&msp,sq,eng,DNNL_MEMORY_ALLOCATE);dnnl_memory_create(&mdp,dq,eng,DNNL_MEMORY_ALLOCATE);
  dnnl_primitive_desc_t rpd; dnnl_primitive_t rp; dnnl_reorder_primitive_desc_create(&rpd,&wmd,eng,wq,eng,NULL);dnnl_primitive_create(&rp,rpd);
  dnnl_exec_arg_t ra[2]={{DNNL_ARG_FROM,mw},{DNNL_ARG_TO,mwp}};dnnl_primitive_execute(rp,st,2,ra);dnnl_stream_wait(st);
  dnnl_primitive_desc_t rs,rd; dnnl_primitive_t ps,pdst; dnnl_reorder_primitive_desc_create(&rs,&smd,eng,sq,eng,NULL);dnnl_primitive_create(&ps,rs);
  dnnl_reorder_primitive_desc_create(&rd,dq,eng,&dmd,eng,NULL);dnnl_primitive_create(&pdst,rd);
  dnnl_primitive_t conv; dnnl_primitive_create(&conv,pd);
  dnnl_exec_arg_t ca[4]={{DNNL_ARG_SRC,msp},{DNNL_ARG_WEIGHTS,mwp},{DNNL_ARG_BIAS,mb},{DNNL_ARG_DST,mdp}};
  dnnl_exec_arg_t sa[2]={{DNNL_ARG_FROM,ms},{DNNL_ARG_TO,msp}},da[2]={{DNNL_ARG_FROM,mdp},{DNNL_ARG_TO,md}};
  for(int r=0;r<R;r++){double t0=now();dnnl_primitive_execute(ps,st,2,sa);dnnl_primitive_execute(conv,st,4,ca);dnnl_primitive_execute(pdst,st,2,da);dnnl_stream_wait(st);t[r]=now()-t0;}
  char nm[80];snprintf(nm,sizeof nm,"onednn %s %s+reorders",anyfmt?"any":"nchw",impl);report(nm,t,R);
  for(int r=0;r<R;r++){double t0=now();dnnl_primitive_execute(conv,st,4,ca);dnnl_stream_wait(st);t[r]=now()-t0;}
  snprintf(nm,sizeof nm,"onednn %s conv only",anyfmt?"any":"nchw");report(nm,t,R);}
#endif
  (void)threads; (void)t; (void)R;
  return 0;}
