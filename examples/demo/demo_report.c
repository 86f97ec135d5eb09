/* gfxep demo — progress line, PNGs, report.json and frames.csv. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "demo.h"
#include "png_write.h"

void demo_progress(const char* what, int done, int total, double fps, double cpu_us) {
  fprintf(stderr, "\r%-18s frame %5d/%-5d %8.1f frames/s  host %7.1f us/frame", what, done, total, fps, cpu_us);
  fflush(stderr);
}

int demo_write_pngs(const demo_ctx* c, const char* out_dir, const char* tag, demo_keep* keep, int n) {
  char path[4096], err[512];
  for (int i = 0; i < n; i++) {
    snprintf(path, sizeof path, "%s/%s_frame_%05d.png", out_dir, tag, keep[i].frame);
    if (png_write_rgba(path, keep[i].rgba, 2 * c->width, c->height, err, sizeof err)) {
      fprintf(stderr, "gfxep-demo: %s\n", err);
      return -1;
    }
  }
  if (n) printf("%s: wrote %d PNGs (noisy | denoised, %ux%u) into %s\n", tag, n, 2 * c->width, c->height, out_dir);
  return 0;
}

void demo_report_free(demo_report* r) {
  series* all[] = {&r->cpu_us,        &r->ort_us,        &r->ring_wait_us,     &r->render_us,
                   &r->between_us,    &r->present_us,    &r->round_trip_us,    &r->frame_us,
                   &r->gfxep_wait_us, &r->gfxep_run_us,  &r->gfxep_signal_us, &r->gfxep_total_us};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) series_free(all[i]);
}

static void json_series(FILE* f, const char* key, const series* s, int last) {
  if (!s->n) return;
  fprintf(f, "      \"%s\": {\"p50\": %.2f, \"p99\": %.2f, \"mean\": %.2f, \"n\": %zu}%s\n", key,
          series_percentile(s, 0.5), series_percentile(s, 0.99), series_mean(s), s->n, last ? "" : ",");
}

static void json_number(FILE* f, const char* key, double v, const char* end) {
  if (isfinite(v)) fprintf(f, "  \"%s\": %.4g%s\n", key, v, end);
  else fprintf(f, "  \"%s\": null%s\n", key, end);
}

int demo_report_write(const demo_ctx* c, const demo_options* o, const demo_report* reports, int n, double max_abs,
                      double psnr_noisy, double psnr_out) {
  char path[4096];
  snprintf(path, sizeof path, "%s/report.json", o->out_dir);
  FILE* f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "gfxep-demo: cannot write %s\n", path);
    return -1;
  }
  time_t now = time(NULL);
  char date[64];
  strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
  fprintf(f, "{\n  \"date\": \"%s\",\n  \"onnxruntime\": \"%s\",\n  \"gfxep_device\": \"%s\",\n  \"backend\": \"%s\",\n",
          date, c->k.version, ortkit_device_meta((ortkit*)&c->k, c->device, "gfxep.device_name"), c->backend);
  fprintf(f, "  \"precision\": \"%s\",\n  \"gfxep_on_the_renderers_queue\": %s,\n  \"frames_ordered_by\": \"%s\",\n",
          o->precision ? o->precision : "fp32", c->one_queue ? "true" : "false",
          !c->zero_copy ? "host" : c->use_semaphores ? "timeline semaphores" : "the one queue");
  fprintf(f, "  \"vulkan_device\": \"%s\",\n  \"model\": \"%s\",\n  \"width\": %u,\n  \"height\": %u,\n  \"in_flight\": %d,\n",
          vkp_device_name(c->vk), o->model, c->width, c->height, o->in_flight);
  json_number(f, "check_max_abs_vs_cpu_ep", max_abs, ",");
  json_number(f, "psnr_noisy_db", psnr_noisy, ",");
  json_number(f, "psnr_denoised_db", psnr_out, ",");
  fprintf(f, "  \"pipelines\": {\n");
  for (int i = 0; i < n; i++) {
    const demo_report* r = &reports[i];
    fprintf(f, "    \"%s\": {\n      \"frames\": %d,\n      \"fps\": %.1f,\n", r->name, r->frames,
            r->seconds > 0 ? r->frames / r->seconds : 0.0);
    json_series(f, "host_us_per_frame_submit", &r->cpu_us, 0);
    json_series(f, "host_us_in_gfxep_wait_run_signal", &r->ort_us, 0);
    json_series(f, "host_us_waiting_for_a_free_slot", &r->ring_wait_us, 0);
    json_series(f, "gpu_us_render", &r->render_us, 0);
    json_series(f, "gpu_us_wait_infer_signal_with_hops", &r->between_us, 0);
    json_series(f, "gpu_us_present", &r->present_us, 0);
    json_series(f, "gpu_us_frame_round_trip", &r->round_trip_us, 0);
    json_series(f, "host_us_frame_latency", &r->frame_us, 0);
    json_series(f, "gpu_us_gfxep_wait", &r->gfxep_wait_us, 0);
    json_series(f, "gpu_us_gfxep_inference", &r->gfxep_run_us, 0);
    json_series(f, "gpu_us_gfxep_signal", &r->gfxep_signal_us, 0);
    json_series(f, "gpu_us_gfxep_frame", &r->gfxep_total_us, 0);
    fprintf(f, "      \"seconds\": %.3f\n    }%s\n", r->seconds, i + 1 < n ? "," : "");
  }
  fprintf(f, "  }\n}\n");
  fclose(f);

  snprintf(path, sizeof path, "%s/frames.csv", o->out_dir);
  f = fopen(path, "w");
  if (f) {
    fprintf(f, "pipeline,frame,host_us,gpu_render_us,gpu_between_us,gpu_present_us,gpu_round_trip_us,"
               "gpu_gfxep_wait_us,gpu_gfxep_inference_us,gpu_gfxep_signal_us\n");
    for (int i = 0; i < n; i++) {
      const demo_report* r = &reports[i];
      size_t rows = r->cpu_us.n > r->frame_us.n ? r->cpu_us.n : r->frame_us.n;
      for (size_t k = 0; k < rows; k++) {
        double host = k < r->cpu_us.n ? r->cpu_us.v[k] : r->frame_us.v[k];
        fprintf(f, "%s,%zu,%.2f", r->name, k, host);
        const series* g[] = {&r->render_us,     &r->between_us,   &r->present_us,     &r->round_trip_us,
                             &r->gfxep_wait_us, &r->gfxep_run_us, &r->gfxep_signal_us};
        for (int j = 0; j < 7; j++) {
          if (k < g[j]->n) fprintf(f, ",%.2f", g[j]->v[k]);
          else fprintf(f, ",");
        }
        fprintf(f, "\n");
      }
    }
    fclose(f);
  }

  printf("\n%-20s %8s %10s %10s %13s %13s %12s\n", "pipeline", "fps", "host p50", "host p99", "GPU frame p50",
         "GPU frame p99", "latency p50");
  for (int i = 0; i < n; i++) {
    const demo_report* r = &reports[i];
    const series* host = r->cpu_us.n ? &r->cpu_us : &r->frame_us;
    char cells[5][32];
    const series* col[5] = {host, host, &r->round_trip_us, &r->round_trip_us, &r->frame_us};
    const double pcts[5] = {0.5, 0.99, 0.5, 0.99, 0.5};
    for (int j = 0; j < 5; j++) /* a figure the pipeline does not have (no GPU timestamps) is "-" */
      if (col[j]->n) snprintf(cells[j], sizeof cells[j], "%.1fus", series_percentile(col[j], pcts[j]));
      else snprintf(cells[j], sizeof cells[j], "-");
    printf("%-20s %8.1f %10s %10s %13s %13s %12s\n", r->name, r->seconds > 0 ? r->frames / r->seconds : 0.0,
           cells[0], cells[1], cells[2], cells[3], cells[4]);
  }
  for (int i = 0; i < n; i++) {
    const demo_report* r = &reports[i];
    if (!r->gfxep_run_us.n) continue;
    const series* part[4] = {&r->gfxep_wait_us, &r->gfxep_run_us, &r->gfxep_signal_us, &r->gfxep_total_us};
    char cells[4][32];
    for (int j = 0; j < 4; j++) /* no waits or signals on the one-queue pipeline: "-" */
      if (part[j]->n) snprintf(cells[j], sizeof cells[j], "%.1fus", series_percentile(part[j], 0.5));
      else snprintf(cells[j], sizeof cells[j], "-");
    printf("%s: gfxep's GPU time per frame, from its frame timings (p50): wait %s, inference %s, signal %s, "
           "all %s\n",
           r->name, cells[0], cells[1], cells[2], cells[3]);
  }
  printf("report: %s/report.json, per-frame: %s/frames.csv\n", o->out_dir, o->out_dir);
  return 0;
}
