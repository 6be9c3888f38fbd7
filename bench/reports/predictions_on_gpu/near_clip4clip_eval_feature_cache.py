# Source: https://github.com/ArrowLuo/CLIP4Clip/blob/8893d045400547227dd616386a8d380ad9890ad8/main_task_retrieval.py
# Report: CLIP4Clip's eval_epoch caches the text and video features of the whole MSR-VTT/ActivityNet test split (under no_grad) in Python lists before the similarity pass
# Shape: the features and masks are cached with .cpu() (host memory grows, not the GPU) and each cached block is moved back to the device only for its similarity call
# Expect: near-miss: must be silent
import numpy as np
import torch


def _run_on_single_gpu(model, device, batch_list_t, batch_list_v,
                       batch_sequence_output_list, batch_visual_output_list):
    sim_matrix = []
    for idx1, b1 in enumerate(batch_list_t):
        input_mask, segment_ids = (t.to(device) for t in b1)
        sequence_output = batch_sequence_output_list[idx1].to(device)
        each_row = []
        for idx2, b2 in enumerate(batch_list_v):
            video_mask = b2[0].to(device)
            visual_output = batch_visual_output_list[idx2].to(device)
            b1b2_logits, *_tmp = model.get_similarity_logits(
                sequence_output, visual_output, input_mask, video_mask,
                loose_type=model.loose_type)
            each_row.append(b1b2_logits.cpu().detach().numpy())
        sim_matrix.append(np.concatenate(tuple(each_row), axis=-1))
    return sim_matrix


def eval_epoch(args, model, test_dataloader, device, n_gpu, logger):
    if hasattr(model, 'module'):
        model = model.module.to(device)
    else:
        model = model.to(device)

    model.eval()
    with torch.no_grad():
        batch_list_t, batch_list_v = [], []
        batch_sequence_output_list, batch_visual_output_list = [], []
        for bid, batch in enumerate(test_dataloader):
            batch = tuple(t.to(device) for t in batch)
            input_ids, input_mask, segment_ids, video, video_mask = batch
            sequence_output, visual_output = model.get_sequence_visual_output(
                input_ids, segment_ids, input_mask, video, video_mask)

            batch_sequence_output_list.append(sequence_output.cpu())
            batch_list_t.append((input_mask.cpu(), segment_ids.cpu(),))
            batch_visual_output_list.append(visual_output.cpu())
            batch_list_v.append((video_mask.cpu(),))
            print("{}/{}\r".format(bid, len(test_dataloader)), end="")

        sim_matrix = _run_on_single_gpu(model, device, batch_list_t, batch_list_v,
                                        batch_sequence_output_list,
                                        batch_visual_output_list)
        sim_matrix = np.concatenate(tuple(sim_matrix), axis=0)

    logger.info("sim matrix size: {}, {}".format(sim_matrix.shape[0],
                                                 sim_matrix.shape[1]))
    ranks = np.argsort(-sim_matrix, axis=1)
    gt = np.arange(sim_matrix.shape[0])[:, None]
    r1 = float(np.mean(ranks[:, :1] == gt)) * 100
    logger.info("Text-to-Video: R@1: {:.1f}".format(r1))
    return r1
