# Source: https://github.com/hamedrab/FOREC/blob/6151c841c1827b3b0db7fddfec4041a6b01f9e12/utils.py
# Report: FOREC cross-market recommender reloads pretrained GMF/MLP/NeuMF checkpoints (several per run, one per market) through a resume_checkpoint helper; users reported GPU memory rising during the FOREC phase (also: memory report: https://github.com/hamedrab/FOREC/issues/4)
# Shape: the helper calls torch.load on the checkpoint path with no map_location, so every tensor is materialised on the device it was saved from before load_state_dict copies it into the model
# Expect: TML011 line 23
import torch


def set_seed(args):
    torch.manual_seed(args.seed)


def save_checkpoint(model, model_dir):
    torch.save(model.state_dict(), model_dir)


def use_cuda(enabled, device_id=0):
    if enabled:
        assert torch.cuda.is_available(), "CUDA is not available"
        torch.cuda.set_device(device_id)


def resume_checkpoint(model, model_dir, device_id, maml_bool=False):
    state_dict = torch.load(model_dir)  # expect: TML011
    if maml_bool:
        for key in list(state_dict.keys()):
            new_key = key.replace("module.", "")
            state_dict[new_key] = state_dict[key]
            del state_dict[key]
    model.load_state_dict(state_dict, strict=False)
    return model


def load_pretrained_heads(model, config, gmf_dir, mlp_dir):
    """NeuMF_MH warm start: pull the GMF and MLP towers from their checkpoints."""
    for sub_model, model_dir in ((model.gmf, gmf_dir), (model.mlp, mlp_dir)):
        if config["use_cuda"]:
            sub_model.cuda()
        resume_checkpoint(sub_model, model_dir, device_id=config["device_id"], maml_bool=True)
    return model


@torch.no_grad()
def test_model(model, config, test_dataloader):
    model.eval()
    task_rec_all = []
    for test_user_ids, test_item_ids, _ in test_dataloader:
        cur_users = test_user_ids.tolist()
        cur_items = test_item_ids.tolist()
        if config["use_cuda"]:
            test_user_ids, test_item_ids = test_user_ids.cuda(), test_item_ids.cuda()
        batch_scores = model(test_user_ids, test_item_ids).cpu().numpy()
        for index in range(len(cur_users)):
            task_rec_all.append((cur_users[index], cur_items[index], batch_scores[index][0].item()))
    return task_rec_all
