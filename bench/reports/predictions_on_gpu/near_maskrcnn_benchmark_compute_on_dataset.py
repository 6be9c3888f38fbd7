# Source: https://github.com/facebookresearch/maskrcnn-benchmark/blob/7c8cf415671b1af3204bef58ad34237ba129ec12/maskrcnn_benchmark/engine/inference.py
# Report: Audited idiom: compute_on_dataset runs the detector under torch.no_grad() and moves every BoxList prediction to cpu_device before results_dict.update(...), then predictions of all ranks are gathered for COCO evaluation (GPU OOM in gathering/eval is discussed in maskrcnn-benchmark PR #383).
# Shape: As upstream: output = [o.to(cpu_device) for o in output] inside the no_grad block before results_dict.update.
# Expect: near-miss: must be silent

import datetime
import logging
import time

import torch
import torch.distributed as dist
from tqdm import tqdm


def is_main_process():
    return not dist.is_initialized() or dist.get_rank() == 0


def synchronize():
    if dist.is_initialized() and dist.get_world_size() > 1:
        dist.barrier()


def all_gather(data):
    if not dist.is_initialized() or dist.get_world_size() == 1:
        return [data]
    gathered = [None] * dist.get_world_size()
    dist.all_gather_object(gathered, data)
    return gathered


def compute_on_dataset(model, data_loader, device):
    model.eval()
    results_dict = {}
    cpu_device = torch.device("cpu")
    for i, batch in enumerate(tqdm(data_loader)):
        images, targets, image_ids = batch
        images = images.to(device)
        with torch.no_grad():
            output = model(images)
            output = [o.to(cpu_device) for o in output]
        results_dict.update({img_id: result for img_id, result in zip(image_ids, output)})
    return results_dict


def _accumulate_predictions_from_multiple_gpus(predictions_per_gpu):
    all_predictions = all_gather(predictions_per_gpu)
    if not is_main_process():
        return None
    predictions = {}
    for p in all_predictions:
        predictions.update(p)
    image_ids = list(sorted(predictions.keys()))
    if len(image_ids) != image_ids[-1] + 1:
        logging.getLogger("maskrcnn_benchmark.inference").warning(
            "Number of images gathered from multiple processes is not contiguous")
    return [predictions[i] for i in image_ids]


def inference(model, data_loader, dataset_name, evaluate, device="cuda", output_folder=None):
    device = torch.device(device)
    logger = logging.getLogger("maskrcnn_benchmark.inference")
    dataset = data_loader.dataset
    logger.info("Start evaluation on {} dataset({} images).".format(dataset_name, len(dataset)))
    start_time = time.time()
    predictions = compute_on_dataset(model, data_loader, device)
    synchronize()
    total_time = str(datetime.timedelta(seconds=time.time() - start_time))
    logger.info("Total inference time: {}".format(total_time))

    predictions = _accumulate_predictions_from_multiple_gpus(predictions)
    if not is_main_process():
        return None
    if output_folder:
        torch.save(predictions, output_folder + "/predictions.pth")
    return evaluate(dataset=dataset, predictions=predictions, output_folder=output_folder)
