# Source: https://github.com/kenshohara/3D-ResNets-PyTorch/blob/8e6a026d57eda8eb54db45090e315c310750762f/inference.py
# Report: audited correct idiom: clip-level inference keeps every segment's softmax scores in results['results'][video_id] (a defaultdict of lists of dicts) for video-level averaging, moving them to the CPU first
# Shape: as in the repository: under no_grad the softmax scores are moved with .cpu() before each clip row goes into the per-video list of dicts, so only host memory grows
# Expect: near-miss: must be silent
import json
import time
from collections import defaultdict

import torch
import torch.nn.functional as F


def get_video_results(outputs, class_names, output_topk):
    sorted_scores, locs = torch.topk(outputs, k=min(output_topk, len(class_names)))
    video_results = []
    for i in range(sorted_scores.size(0)):
        video_results.append({
            'label': class_names[locs[i].item()],
            'score': sorted_scores[i].item()
        })
    return video_results


def inference(data_loader, model, result_path, class_names, no_average,
              output_topk, device):
    print('inference')
    model.eval()
    results = {'results': defaultdict(list)}
    end_time = time.time()

    with torch.no_grad():
        for i, (inputs, targets) in enumerate(data_loader):
            video_ids, segments = zip(*targets)
            outputs = model(inputs.to(device, non_blocking=True))
            outputs = F.softmax(outputs, dim=1).cpu()

            for j in range(outputs.size(0)):
                results['results'][video_ids[j]].append({'segment': segments[j], 'output': outputs[j]})

            print('[{}/{}]\tTime {:.3f}'.format(i + 1, len(data_loader),
                                              time.time() - end_time))
            end_time = time.time()

    inference_results = {'results': {}}
    for video_id, video_results in results['results'].items():
        if not no_average:
            video_outputs = torch.stack([r['output'] for r in video_results])
            average_scores = torch.mean(video_outputs, dim=0)
            inference_results['results'][video_id] = get_video_results(
                average_scores, class_names, output_topk)
        else:
            inference_results['results'][video_id] = [
                {'segment': r['segment'],
                 'result': get_video_results(r['output'], class_names, output_topk)}
                for r in video_results
            ]

    with result_path.open('w') as f:
        json.dump(inference_results, f)
