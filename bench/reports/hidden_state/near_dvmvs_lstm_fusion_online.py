# Source: https://github.com/ardaduz/deep-video-mvs/blob/470065a6580a3ccbc6357433a2647eb9c5d4b456/dvmvs/fusionnet/run-testing-online.py
# Report: audited idiom: DeepVideoMVS carries the ConvLSTM fusion state from keyframe to keyframe only under torch.no_grad() (online testing) and restarts it per subsequence in training; this online fine-tuning variant cuts the state after each step (source note: training side: dvmvs/fusionnet/run-training.py)
# Shape: same keyframe loop and one optimizer step per keyframe, but after optimizer.step() the (h, c) pair is rebound as `tuple(s.detach() for s in lstm_state)`, so only the values travel to the next keyframe
# Expect: near-miss: must be silent
import numpy as np
import torch

from dvmvs.config import Config
from dvmvs.fusionnet.model import FeatureExtractor, FeatureShrinker, CostVolumeEncoder, LSTMFusion, CostVolumeDecoder
from dvmvs.keyframe_buffer import KeyframeBuffer
from dvmvs.utils import cost_volume_fusion, get_warp_grid_for_cost_volume_calculation


def l1_inv_loss(prediction, groundtruth):
    valid = groundtruth > 0.0
    return torch.mean(torch.abs(1.0 / prediction[valid] - 1.0 / groundtruth[valid]))


def finetune_online(frames, K_full, device=torch.device("cuda")):
    feature_extractor = FeatureExtractor().to(device)
    feature_shrinker = FeatureShrinker().to(device)
    cost_volume_encoder = CostVolumeEncoder().to(device)
    lstm_fusion = LSTMFusion().to(device)
    cost_volume_decoder = CostVolumeDecoder().to(device)
    optimizer = torch.optim.Adam(list(lstm_fusion.parameters()) + list(cost_volume_decoder.parameters()), lr=1e-5)

    warp_grid = get_warp_grid_for_cost_volume_calculation(width=int(Config.test_image_width / 2),
                                                          height=int(Config.test_image_height / 2),
                                                          device=device)
    keyframe_buffer = KeyframeBuffer(buffer_size=Config.test_keyframe_buffer_size,
                                     keyframe_pose_distance=Config.test_keyframe_pose_distance,
                                     optimal_t_score=Config.test_optimal_t_measure,
                                     optimal_R_score=Config.test_optimal_R_measure,
                                     store_return_indices=False)
    half_K = K_full.clone().to(device)
    half_K[:, 0:2, :] = half_K[:, 0:2, :] / 2.0
    lstm_K_bottom = K_full.clone().to(device)
    lstm_K_bottom[:, 0:2, :] = lstm_K_bottom[:, 0:2, :] / 32.0

    lstm_state = None
    previous_pose = None
    for reference_image, reference_pose, reference_depth in frames:
        response = keyframe_buffer.try_new_keyframe(reference_pose, reference_image)
        if response in (0, 2, 4, 5):
            continue
        if response == 3:
            lstm_state, previous_pose = None, None
            continue
        image_torch = torch.from_numpy(np.transpose(reference_image, (2, 0, 1))).float().to(device).unsqueeze(0)
        pose_torch = torch.from_numpy(reference_pose).float().to(device).unsqueeze(0)
        depth_torch = torch.from_numpy(reference_depth).float().to(device).view(1, 1, *reference_depth.shape)
        measurement_frames = keyframe_buffer.get_best_measurement_frames(Config.test_n_measurement_frames)

        with torch.no_grad():
            half, quarter, one_eight, one_sixteen = feature_shrinker(*feature_extractor(image_torch))
            m_halfs = [feature_shrinker(*feature_extractor(torch.from_numpy(np.transpose(img, (2, 0, 1))).float().to(device).unsqueeze(0)))[0] for _, img in measurement_frames]
            m_poses = [torch.from_numpy(p).float().to(device).unsqueeze(0) for p, _ in measurement_frames]
            cost_volume = cost_volume_fusion(image1=half, image2s=m_halfs, pose1=pose_torch, pose2s=m_poses, K=half_K,
                                             warp_grid=warp_grid, min_depth=0.25, max_depth=20.0, n_depth_levels=64,
                                             device=device, dot_product=True)
            skip0, skip1, skip2, skip3, bottom = cost_volume_encoder(half, quarter, one_eight, one_sixteen, cost_volume)

        depth_estimation = torch.nn.functional.interpolate(depth_torch, scale_factor=(1.0 / 32.0), mode="nearest")
        lstm_state = lstm_fusion(current_encoding=bottom, current_state=lstm_state, previous_pose=previous_pose, current_pose=pose_torch, estimated_current_depth=depth_estimation, camera_matrix=lstm_K_bottom)
        prediction, _, _, _, _ = cost_volume_decoder(image_torch, skip0, skip1, skip2, skip3, lstm_state[0])

        loss = l1_inv_loss(prediction, depth_torch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        lstm_state = tuple(s.detach() for s in lstm_state)
        previous_pose = pose_torch
        print("keyframe loss {:.4f}".format(loss.item()))
