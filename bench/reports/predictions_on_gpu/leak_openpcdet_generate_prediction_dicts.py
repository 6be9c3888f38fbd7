# Source: https://github.com/open-mmlab/OpenPCDet/blob/2bbbcc335eccd42dd9dd27f267e91e0902767298/tools/eval_utils/eval_utils.py
# Report: OpenPCDet's eval_one_epoch runs the detector under no_grad and extends det_annos with the dicts returned by dataset.generate_prediction_dicts; the repository's helper converts pred_scores / pred_boxes / pred_labels with .cpu().numpy() first (source note: helper: pcdet/datasets/kitti/kitti_dataset.py@44c10a3afc6d9bc2f457ad3f8266a83de5f9b312)
# Shape: the rewrite's helper keeps box_dict['pred_scores'] and box_dict['pred_boxes'] as CUDA tensors inside each returned anno dict, so `det_annos += annos` keeps every frame's boxes on the GPU until the end of evaluation
# Expect: TML004 line 82
import pickle
import time

import numpy as np
import torch
import tqdm


def load_data_to_gpu(batch_dict):
    for key, val in batch_dict.items():
        if isinstance(val, np.ndarray) and key not in ('frame_id', 'calib', 'image_shape'):
            batch_dict[key] = torch.from_numpy(val).float().cuda()


class KittiDataset(torch.utils.data.Dataset):
    class_names = ['Car', 'Pedestrian', 'Cyclist']

    @staticmethod
    def generate_prediction_dicts(batch_dict, pred_dicts, class_names, output_path=None):
        def get_template_prediction(num_samples):
            return {'name': np.zeros(num_samples), 'score': np.zeros(num_samples),
                    'boxes_lidar': np.zeros([num_samples, 7])}

        def generate_single_sample_dict(batch_index, box_dict):
            # scores and boxes stay CUDA tensors; only labels go to numpy for the names
            pred_scores = box_dict['pred_scores']
            pred_boxes = box_dict['pred_boxes']
            pred_labels = box_dict['pred_labels'].cpu().numpy()
            pred_dict = get_template_prediction(pred_scores.shape[0])
            if pred_scores.shape[0] == 0:
                return pred_dict
            pred_dict['name'] = np.array(class_names)[pred_labels - 1]
            pred_dict['score'] = pred_scores
            pred_dict['boxes_lidar'] = pred_boxes
            return pred_dict

        annos = []
        for index, box_dict in enumerate(pred_dicts):
            single_pred_dict = generate_single_sample_dict(index, box_dict)
            single_pred_dict['frame_id'] = batch_dict['frame_id'][index]
            annos.append(single_pred_dict)
        return annos


def statistics_info(cfg, ret_dict, metric, disp_dict):
    for cur_thresh in cfg.MODEL.POST_PROCESSING.RECALL_THRESH_LIST:
        metric['recall_roi_%s' % str(cur_thresh)] += ret_dict.get('roi_%s' % str(cur_thresh), 0)
        metric['recall_rcnn_%s' % str(cur_thresh)] += ret_dict.get('rcnn_%s' % str(cur_thresh), 0)
    metric['gt_num'] += ret_dict.get('gt', 0)
    min_thresh = cfg.MODEL.POST_PROCESSING.RECALL_THRESH_LIST[0]
    disp_dict['recall_%s' % str(min_thresh)] = '(%d, %d) / %d' % (
        metric['recall_roi_%s' % str(min_thresh)], metric['recall_rcnn_%s' % str(min_thresh)], metric['gt_num'])


def eval_one_epoch(cfg, args, model, dataloader, epoch_id, logger, result_dir=None):
    result_dir.mkdir(parents=True, exist_ok=True)
    metric = {'gt_num': 0}
    for cur_thresh in cfg.MODEL.POST_PROCESSING.RECALL_THRESH_LIST:
        metric['recall_roi_%s' % str(cur_thresh)] = 0
        metric['recall_rcnn_%s' % str(cur_thresh)] = 0

    dataset = dataloader.dataset
    class_names = dataset.class_names
    det_annos = []

    logger.info('*************** EPOCH %s EVALUATION *****************' % epoch_id)
    model.eval()
    progress_bar = tqdm.tqdm(total=len(dataloader), leave=True, desc='eval', dynamic_ncols=True)
    start_time = time.time()
    for i, batch_dict in enumerate(dataloader):
        load_data_to_gpu(batch_dict)
        with torch.no_grad():
            pred_dicts, ret_dict = model(batch_dict)

        disp_dict = {}
        statistics_info(cfg, ret_dict, metric, disp_dict)
        annos = dataset.generate_prediction_dicts(batch_dict, pred_dicts, class_names)
        det_annos += annos  # expect: TML004
        progress_bar.set_postfix(disp_dict)
        progress_bar.update()
    progress_bar.close()

    sec_per_example = (time.time() - start_time) / len(dataloader.dataset)
    logger.info('Generate label finished(sec_per_example: %.4f second).' % sec_per_example)
    with open(result_dir / 'result.pkl', 'wb') as f:
        pickle.dump(det_annos, f)
    result_str, result_dict = dataset.evaluation(
        det_annos, class_names, eval_metric=cfg.MODEL.POST_PROCESSING.EVAL_METRIC)
    logger.info(result_str)
    return result_dict
